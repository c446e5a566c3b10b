"""fastvec: the from-setup-py migration example."""

from ._C import norm

try:
    from .version import __version__
except ImportError:  # not built yet
    __version__ = "0+unknown"

__all__ = ["norm", "__version__"]
