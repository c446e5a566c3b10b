"""skstats: the from-scikit-build-core migration example."""

from ._core import mean, variance, variant

try:
    from .version import __version__  # written by buildkit at build time
except ImportError:  # not built yet
    __version__ = "0+unknown"

__all__ = ["mean", "variance", "variant", "__version__"]
