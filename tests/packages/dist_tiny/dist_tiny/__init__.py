"""dist_tiny: the shared library built from several translation units, loaded with ctypes."""

import ctypes
from pathlib import Path

_library = ctypes.CDLL(str(next((Path(__file__).parent / "lib").glob("libdist_tiny.*"))))
_library.dist_tiny_answer.restype = ctypes.c_long


def answer() -> int:
    return _library.dist_tiny_answer()
