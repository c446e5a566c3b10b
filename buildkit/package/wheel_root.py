"""Installing at the wheel's root, scikit-build-core's way.

With ``install-prefix = "wheel-root"`` the CMake install prefix is the package root
(the project, or ``src/``): ``install(TARGETS m DESTINATION pkg)`` puts a module
into the package and ``DESTINATION .`` makes a top-level module.  buildkit then
defines the CMake variables a CMakeLists written for scikit-build-core reads, so it
configures unchanged, and registers every extension module CMake installed.
``install-dir`` moves the prefix into a folder of that root (scikit-build-core's
``wheel.install-dir``); ``SKBUILD_PLATLIB_DIR`` stays the root.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from buildkit.builder.build_state import WHEEL_DIRS
from buildkit.package.contents import module_suffixes

# The wheel folders besides platlib (scikit-build-core's names).
OTHER_WHEEL_DIRS = ("data", "scripts", "headers", "metadata", "null")


def wheel_dirs_root(build_dir: Path) -> Path:
    return build_dir / WHEEL_DIRS


def skbuild_defines(*, project_name: str, public_version: str, release: tuple[int, ...], platlib: Path,
                    build_dir: Path, state: str) -> dict[str, str]:
    """scikit-build-core's configure variables, for a CMakeLists written against it.

    ``platlib`` is the wheel's root, also when ``install-dir`` moves the install prefix below
    it; ``state`` is ``wheel`` for a wheel build, ``editable`` for a build in place (develop,
    an editable install).  scikit-build-core's ``sdist`` and ``metadata_*`` states never
    configure here: buildkit's sdist runs no CMake, and it offers no ``prepare_metadata_*``
    hook (metadata comes from the wheel build).  Develop and wheel builds differ in
    ``platlib`` already, so the state adds no configure of its own.

    The version is the public one (no ``+git<sha>``): it is a configure input, and a
    new commit must not reconfigure the build.
    """
    dirs = wheel_dirs_root(build_dir)
    defines = {
        "SKBUILD": "2",
        "SKBUILD_PROJECT_NAME": project_name.replace("-", "_").replace(".", "_"),
        # project(VERSION) takes at most four numeric parts.
        "SKBUILD_PROJECT_VERSION": ".".join(str(part) for part in release[:4]),
        "SKBUILD_PROJECT_VERSION_FULL": public_version,
        "SKBUILD_SOABI": sysconfig.get_config_var("SOABI") or "",
        "SKBUILD_PLATLIB_DIR": platlib.as_posix(),
        "SKBUILD_STATE": state,
    }
    defines.update({f"SKBUILD_{name.upper()}_DIR": (dirs / name).as_posix() for name in OTHER_WHEEL_DIRS})
    return defines


def installed_extension_modules(installed: Iterable[Path], package_root: Path) -> list[str]:
    """Dotted names of the extension modules CMake installed under ``package_root``.

    Only files whose suffix is this interpreter's (or the stable ABI's): a module left
    over from another Python version is not this build's.
    """
    package_root = package_root.resolve()
    suffixes = module_suffixes()
    names = []
    for entry in installed:
        path = Path(entry)
        if not path.is_relative_to(package_root):
            continue
        relative = path.relative_to(package_root)
        suffix = next((s for s in suffixes if relative.name.endswith(s)), None)
        if suffix is None:
            continue
        parts = [*relative.parts[:-1], relative.name[: -len(suffix)]]
        if all(part.isidentifier() for part in parts):
            names.append(".".join(parts))
    return sorted(set(names))


def wheel_dirs_keywords(installed: Iterable[Path], build_dir: Path, project_root: Path) -> dict[str, list[Any]]:
    """setuptools keywords that ship what CMake installed into the data, scripts and
    headers folders (the wheel's ``.data/`` folders); the null folder's files are
    dropped on purpose, as its name says.

    Only files of the last install count: one an older build left there is not this
    build's.
    """
    root = wheel_dirs_root(build_dir).resolve()
    grouped: dict[str, list[Path]] = {"data": [], "scripts": [], "headers": []}
    for path in (Path(p).resolve() for p in installed):
        if path.is_relative_to(root) and path.relative_to(root).parts[0] in grouped:
            grouped[path.relative_to(root).parts[0]].append(path)

    def relative(path: Path) -> str:  # setuptools wants paths relative to setup.py's folder
        return os.path.relpath(path, project_root)

    data: dict[str, list[str]] = {}
    for path in sorted(grouped["data"]):
        data.setdefault(path.parent.relative_to(root / "data").as_posix(), []).append(relative(path))
    return {"data_files": sorted(data.items()), "scripts": [relative(p) for p in sorted(grouped["scripts"])],
            "headers": [relative(p) for p in sorted(grouped["headers"])]}
