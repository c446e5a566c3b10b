"""minimal: buildkit's smallest example, a C++ library with a Python front end."""

from . import _native

_native.load()  # libminimal: from minimal/lib, or from the installed libminimal wheel

from ._C import build_flavour, dot, sum  # noqa: E402,A004 - mirrors the C++ names

try:
    from .version import __version__
except ImportError:  # not built yet
    __version__ = "0+unknown"

__all__ = ["build_flavour", "dot", "sum", "__version__"]
