"""Step 6: the extension modules setuptools is told about.

Two kinds: the thin ``_C`` stub that ``build_ext`` compiles and links to the
CMake-built binding library (PyTorch's stub.c shape), and extension modules that
CMake builds and installs into the package tree itself, which ``build_ext`` only
copies into a wheel's build folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension

from buildkit.builder.toolchain.flags import OsxTarget, extension_flags, relative_rpath_args
from buildkit.config.settings import StubExtension


class CMakeBuiltExtension(Extension):
    """An extension module CMake already built and installed into the package tree."""

    def __init__(self, name: str):
        super().__init__(name, sources=[])


def stub_extension(stub: StubExtension | None, *, root: Path, package_root: Path, package_dir: Path,
                   build_type: str, osx: OsxTarget | None,
                   limited_api: tuple[str, str] | None = None) -> Extension | None:
    """The thin ``_C`` stub of ``[tool.buildkit.extension]``, linked to the CMake-built libraries;
    with ``limited_api`` (the macro ``py-api`` asks for) built for the stable ABI, as a
    ``.abi3.so`` (a macro of the same name in the stub's own table wins)."""
    if stub is None:
        return None
    lib_dir = package_dir / stub.rpath
    ext_dir = package_root.joinpath(*stub.name.split(".")[:-1])
    flags = extension_flags(build_type, rpath_dirs=(), osx=osx or OsxTarget())
    rpath = os.path.relpath(lib_dir, ext_dir)
    return Extension(
        stub.name,
        sources=[str(Path(s)) for s in stub.sources],
        libraries=list(stub.libraries),
        library_dirs=[str(lib_dir)],
        include_dirs=[str(package_dir / "include"), *stub.include_dirs],
        define_macros=[*stub.define_macros.items(),
                       *([limited_api] if limited_api and limited_api[0] not in stub.define_macros else [])],
        py_limited_api=limited_api is not None,
        # Python's CFLAGS usually carry -g: keep the project folder out of the debug
        # info, as BuildkitTopLevel.cmake does for the CMake-built libraries.
        extra_compile_args=[*flags.compile_args,
                            *([] if sys.platform == "win32" else [f"-ffile-prefix-map={root}=."])],
        extra_link_args=[*flags.link_args, *relative_rpath_args(rpath)],
        language="c",
    )
