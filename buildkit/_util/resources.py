"""Where the CMake modules and file templates that ship with buildkit live."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # buildkit/
_REPO = _PACKAGE.parent


def _package_dir(package: str, repo_folder: str) -> Path:
    # In a wheel they are the folders of the packages buildkit.cmake / buildkit.templates,
    # inside buildkit/; in a checkout (editable install) they are the top-level folders
    # of the repository.  (importlib.resources is no help: the two have no __init__.py,
    # and files() of a namespace package is a MultiplexedPath, not a real folder.)
    installed = _PACKAGE / package.rpartition(".")[2]
    if installed.is_dir():
        return installed
    return _REPO / repo_folder


def cmake_dir() -> Path:
    return _package_dir("buildkit.cmake", "cmake")


def templates_dir() -> Path:
    return _package_dir("buildkit.templates", "templates")
