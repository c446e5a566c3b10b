"""How a consumer finds what a library-only wheel ships.

The wheel's package answers where its files are: ``__init__.py`` has functions
(``cmake_prefix_path()``, ``include_dir()``...), ``__main__.py`` the same as
``python -m <package> --cmake-prefix-path``.  The distribution registers
scikit-build-core's ``cmake.prefix`` entry point (its package is the prefix that
``find_package`` searches) and, where it ships ``.pc`` files, the ``pkg_config``
entry point that pkgconf's Python distribution reads (a module whose folder holds them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from string import Template

from buildkit._util.resources import templates_dir

PACKAGE_MODULES = ("__init__.py", "__main__.py")
_SHARED_LIBRARY_SUFFIXES = (".so", ".dylib", ".dll")


@dataclass(frozen=True)
class LibraryFolders:
    """Folders of a library package (relative, ``/``-separated; None: it has none)."""

    include: str | None = None
    lib: str | None = None
    cmake: str | None = None
    pkgconfig: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"include": self.include, "lib": self.lib, "cmake": self.cmake, "pkgconfig": self.pkgconfig}


def library_folders(files: Sequence[str]) -> LibraryFolders:
    """Where the headers, shared libraries, CMake package config and .pc files are among
    ``files`` (paths relative to the package folder); the shallowest of each wins."""
    paths = sorted((PurePosixPath(f) for f in files), key=lambda p: (len(p.parts), str(p)))

    def first(matches: Iterable[PurePosixPath]) -> str | None:
        return next((p.as_posix() for p in matches), None)

    include = first(PurePosixPath(p.parts[0]) for p in paths if p.parts[0] == "include" and len(p.parts) > 1)
    lib = first(p.parent for p in paths if _is_shared_library(p.name) and p.parent.name.startswith(("lib", "bin")))
    cmake = first(p.parent for p in paths if p.name.endswith(("Config.cmake", "-config.cmake")))
    pkgconfig = first(p.parent for p in paths if p.suffix == ".pc")
    return LibraryFolders(include, lib, cmake, pkgconfig)


def _is_shared_library(name: str) -> bool:
    return any(name.endswith(s) or f"{s}." in name for s in _SHARED_LIBRARY_SUFFIXES)


def write_package_modules(folder: Path, *, package: str, distribution: str, version: str,
                          folders: LibraryFolders) -> None:
    """``__init__.py`` and ``__main__.py`` of the library package in the staged ``folder``."""
    values = {"package": package, "distribution": distribution, "distribution_repr": repr(distribution),
              "version": version, "version_repr": repr(version), "folders_repr": repr(folders.as_dict())}
    for module, template in zip(PACKAGE_MODULES, ("library_package.py.in", "library_main.py.in"), strict=True):
        text = Template((templates_dir() / template).read_text(encoding="utf-8")).substitute(values)
        (Path(folder) / module).write_text(text, encoding="utf-8")


def entry_points(package: str, folders: LibraryFolders) -> dict[str, list[str]]:
    """The discovery entry points of the distribution whose library package is ``package``."""
    points = {"cmake.prefix": [f"{package} = {package}"]}
    if folders.pkgconfig is not None:
        points["pkg_config"] = [f"{package} = {package}.{folders.pkgconfig.replace('/', '.')}"]
    return points
