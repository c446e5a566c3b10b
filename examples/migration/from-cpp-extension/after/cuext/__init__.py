"""cuext: the from-cpp-extension migration example."""

from ._C import architectures, scale_add

try:
    from .version import __version__
except ImportError:  # not built yet
    __version__ = "0+unknown"

__all__ = ["architectures", "scale_add", "__version__"]
