"""Formatting through libfmtlike's C API."""

from fmtpy import _native

_native.load()  # libfmtlike's libraries, wherever that distribution is installed

from fmtpy._core import format  # noqa: E402

__all__ = ["format"]
