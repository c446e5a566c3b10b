"""Build helpers for projects that use tensorlet from C++."""

from __future__ import annotations

from .. import _libraries

#: Pass to CMake as -DCMAKE_PREFIX_PATH=... so that find_package(Tensorlet) works,
#: whether the libraries come with tensorlet or from the libtensorlet distribution.
cmake_prefix_path: str = str(_libraries.root / "share" / "cmake")
include_path: str = str(_libraries.root / "include")
library_path: str = str(_libraries.root / "lib")
