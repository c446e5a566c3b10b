"""Where the CMake modules and file templates that ship with buildkit live."""

from __future__ import annotations

from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent


def _package_dir(package: str, repo_folder: str) -> Path:
    # In a wheel they are the packages buildkit.cmake / buildkit.templates; in a
    # checkout (editable install) they are the top-level folders of the repository.
    try:
        from importlib.resources import files

        path = Path(str(files(package)))
        if path.is_dir():
            return path
    except (ModuleNotFoundError, TypeError):
        pass
    return _REPO / repo_folder


def cmake_dir() -> Path:
    return _package_dir("buildkit.cmake", "cmake")


def templates_dir() -> Path:
    return _package_dir("buildkit.templates", "templates")
