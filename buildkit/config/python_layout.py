"""Where a project's Python code lives: its package folders and top-level modules.

Decided once, when the settings are read, from the first of these that says
anything:

1. ``[tool.buildkit] packages`` (folders, like scikit-build-core's
   ``wheel.packages``) and ``py-modules``;
2. ``[tool.setuptools]``: ``package-dir``, ``packages`` (a list, or ``find`` with
   ``where``) and ``py-modules``;
3. the tree: the first of ``src/<package>``, ``python/<package>`` and
   ``<package>`` that is a folder (scikit-build-core's search order); for a dotted
   project name (``myns.mypkg``) with no folder of the flat name, ``myns/mypkg`` there
   (:func:`nested_package`).

A project whose package folder does not exist yet (CMake creates it, or the
project is one top-level extension module) keeps the package root that the
tree suggests (``src/`` when there is one holding Python code) and nothing reads
the folder before the build makes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from buildkit.errors import ConfigError

ROOT = PurePosixPath(".")
# scikit-build-core looks in this order; PyTorch-style projects are the last case.
SEARCHED_ROOTS = (PurePosixPath("src"), PurePosixPath("python"), ROOT)


@dataclass(frozen=True)
class PythonLayout:
    """The package root, the top-level packages' folders and the top-level modules."""

    package_root: PurePosixPath  # holds the top-level packages and modules; "." is the project
    package_folders: Mapping[str, PurePosixPath] = field(default_factory=dict)  # top-level name -> folder
    py_modules: tuple[str, ...] = ()
    origin: str = "the tree"  # where the layout came from, for messages

    def folder_of(self, dotted: str) -> PurePosixPath:
        """The folder of a package (``pkg.sub``), relative to the project."""
        top, *rest = dotted.split(".")
        return self.package_folders.get(top, self.package_root / top).joinpath(*rest)

    @property
    def top_level_packages(self) -> tuple[str, ...]:
        return tuple(self.package_folders)

    @property
    def deciding_folders(self) -> tuple[PurePosixPath, ...]:
        """The folders whose top-level packages and modules decide this layout or what it
        registers, were it detected again: the package root and the top-level packages'
        parents (their packages, as found there), ``src/`` and ``python/`` (whose modules place
        a package root not built yet; :meth:`searched_folders` are where the tree is searched)."""
        parents = [folder.parent for folder in self.package_folders.values()]
        return tuple(dict.fromkeys([self.package_root, *parents, *SEARCHED_ROOTS[:-1]]))

    @staticmethod
    def searched_folders(package: str) -> tuple[PurePosixPath, ...]:
        """Where the tree's layout looks for ``package``'s top-level folder, in order."""
        return tuple(candidate / package.split(".", maxsplit=1)[0] for candidate in SEARCHED_ROOTS)

    def setuptools_package_dir(self) -> dict[str, str]:
        """setuptools' ``package_dir``: the root mapping, plus any package kept elsewhere."""
        mapping = {} if self.package_root == ROOT else {"": self.package_root.as_posix()}
        mapping.update({name: folder.as_posix() for name, folder in self.package_folders.items()
                        if folder != self.package_root / name})
        return mapping


def detect_layout(root: Path, package: str, *, packages: tuple[str, ...] = (), py_modules: tuple[str, ...] = (),
                  setuptools_table: Mapping[str, Any] | None = None) -> PythonLayout:
    """The layout of the project at ``root`` whose main import package is ``package``."""
    if packages:
        return _from_folders(root, packages, py_modules, "[tool.buildkit] packages")
    declared = _from_setuptools(root, setuptools_table or {})
    if declared is not None:
        return replace(declared, py_modules=py_modules or declared.py_modules)
    top = package.split(".", maxsplit=1)[0]
    for candidate in SEARCHED_ROOTS:
        if (root / candidate / top).is_dir():
            return PythonLayout(candidate, {top: candidate / top}, py_modules, f"the tree ({candidate / top})")
    # Not there yet: CMake will create it, or the project is top-level modules only.
    return PythonLayout(_unbuilt_root(root, py_modules), {}, py_modules, "the tree (no package folder yet)")


def nested_package(root: Path, project_name: str) -> str | None:
    """scikit-build-core's second guess for a dotted project name such as ``myns.mypkg``: the
    package ``myns.mypkg`` in ``myns/mypkg`` (under ``src/``, ``python/`` or the root), where only
    the last folder has an ``__init__.py`` (PEP 420 namespace packages above it).  None when the
    name has no dot, or a folder of the flat name (``myns_mypkg``) comes first in the search."""
    parts = [part.replace("-", "_") for part in project_name.split(".")]
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        return None
    for candidate in SEARCHED_ROOTS:
        folder = root / candidate
        if (folder / "_".join(parts)).is_dir():
            return None
        if folder.joinpath(*parts, "__init__.py").is_file():
            return ".".join(parts)
    return None


def _unbuilt_root(root: Path, py_modules: tuple[str, ...]) -> PurePosixPath:
    for candidate in SEARCHED_ROOTS[:-1]:
        folder = root / candidate
        if folder.is_dir() and (any(folder.glob("*.py")) or any((folder / f"{m}.py").is_file() for m in py_modules)):
            return candidate
    return ROOT


def _from_folders(root: Path, folders: tuple[str, ...], py_modules: tuple[str, ...], origin: str) -> PythonLayout:
    mapped: dict[str, PurePosixPath] = {}
    for text in folders:
        folder = _relative_folder(root, text, origin)
        name = folder.name
        if not name.isidentifier():
            raise ConfigError(f"{origin} names {text!r}, whose last part {name!r} is not an import name.",
                              "List each top-level package's folder, e.g. `packages = [\"src/pkg\"]`.")
        if name in mapped:
            raise ConfigError(f"{origin} lists two folders for the package {name!r}: "
                              f"{mapped[name].as_posix()!r} and {text!r}.", "Keep one of them.")
        mapped[name] = folder
    parents = {folder.parent for folder in mapped.values()}
    package_root = parents.pop() if len(parents) == 1 else ROOT
    return PythonLayout(package_root, mapped, py_modules, origin)


def inside_project(text: str) -> PurePosixPath | None:
    """A path the configuration gives relative to the project (a package folder, a readme,
    a license), as a posix path; None when it leaves the project: absolute (a drive
    included) or climbing out with ``..``."""
    path = PurePosixPath(text.replace("\\", "/").rstrip("/"))
    if path.is_absolute() or PureWindowsPath(text).drive or ".." in path.parts:
        return None
    return path


def _relative_folder(root: Path, text: str, origin: str) -> PurePosixPath:
    folder = inside_project(text)
    if folder is None or folder == ROOT:
        raise ConfigError(f"{origin} names {text!r}, which is not a folder inside the project.",
                          "Give folders relative to the project, e.g. `src/pkg`.")
    if (root / folder).exists() and not (root / folder).is_dir():
        raise ConfigError(f"{origin} names {text!r}, which is a file, not a folder.",
                          "List package folders; top-level modules go in `py-modules`.")
    return folder


def _from_setuptools(root: Path, table: Mapping[str, Any]) -> PythonLayout | None:
    """The layout ``[tool.setuptools]`` declares, or None when it declares none."""
    origin = "[tool.setuptools]"
    package_dir = table.get("package-dir", {})
    listed = table.get("packages")
    modules = tuple(table.get("py-modules", ()))
    if not isinstance(package_dir, dict) or not all(isinstance(v, str) for v in package_dir.values()):
        raise ConfigError(f"{origin} package-dir must be a table of folder names, not {package_dir!r}.",
                          "Write it as `package-dir = {\"\" = \"src\"}`.")
    if not package_dir and listed is None and not modules:
        return None
    package_root = PurePosixPath(package_dir.get("", "."))
    if isinstance(listed, dict):  # packages.find: `where` says the root
        where = listed.get("find", {}).get("where", [package_root.as_posix()])
        package_root = PurePosixPath(where[0] if isinstance(where, list) and where else package_root)
        names = _top_level_folders(root / package_root)
    elif isinstance(listed, list):
        names = sorted({str(name).split(".")[0] for name in listed})
    else:
        names = _top_level_folders(root / package_root)
    folders = {name: PurePosixPath(package_dir[name]) if name in package_dir else package_root / name
               for name in names}
    return PythonLayout(package_root, folders, modules, origin)


def _top_level_folders(folder: Path) -> list[str]:
    """Folders directly in ``folder`` that are import packages (an ``__init__.py``)."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.name.isidentifier() and (p / "__init__.py").is_file())
