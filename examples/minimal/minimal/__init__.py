"""minimal: buildkit's smallest example, a C++ library with a Python front end."""

from ._C import build_flavour, dot, sum  # noqa: A004 - mirrors the C++ names

try:
    from .version import __version__
except ImportError:  # not built yet
    __version__ = "0+unknown"

__all__ = ["build_flavour", "dot", "sum", "__version__"]
