"""The running build environment's CMake packages, for ``find_package`` and stable rebuilds.

pip, uv and ``python -m build`` install the build requirements (pybind11, nanobind,
torch...) into a throw-away environment: a new path each time, and files with fresh
mtimes.  CMake is told about the environment the build runs in (the folders of
``sys.path`` that hold installed distributions; under pip's isolation these are pip's
overlay, not the target environment), and about the ``cmake.prefix`` and
``cmake.module`` entry points of what is installed there (scikit-build-core's
convention: the value is a module, its folder goes on the search path).

Pointing CMake at the throw-away folders alone would make every compile line name a
new include folder and every header look new, so every isolated build would compile
everything again.  Instead each CMake package of the environment (a top-level folder
of site-packages that holds a package configuration file where ``find_package``
looks, or that an entry point names) is mirrored into ``<build>/build-env/``.  Only
files whose bytes changed are rewritten; an unchanged file keeps its mtime.  The mirror
comes first on ``CMAKE_PREFIX_PATH``, so compile lines and header times stay the same
from one isolated build to the next.  Shared and static libraries are linked, not
copied: a project linking one relinks after each isolated build, but compiles nothing.

Finding the packages reads every installed distribution's entry points (~10 ms for
``importlib.metadata`` alone), so the result is kept in ``.buildkit/build-env.json``
with the mtimes of the environment's folders: a no-op build only stats them.

A CUDA toolkit from NVIDIA's wheels (:mod:`buildkit.builder.toolchain.cuda_toolkit`) is
mirrored the same way, though it is no CMake package: its headers and ``nvcc`` are copied
(nvcc finds the rest of the toolkit beside the path it was started as, and buildkit and
CMake record the compiler by its real path), its libraries and its other programs (cicc,
ptxas, nvlink...: some 250 MB) are linked, and what the wheels lack for a link line is
added inside the mirror (:mod:`.toolkit_mirror`).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildkit._util import console
from buildkit._util.fileutil import point_symlink, read_json, write_atomic, write_json
from buildkit.builder.build_state import BUILD_ENV_MIRROR, BUILD_ENV_RECORD, state_path
from buildkit.builder.configure import toolkit_mirror

MIRROR_FOLDER = BUILD_ENV_MIRROR
RECORD_FORMAT = 2
ENTRY_POINT_GROUPS = ("cmake.prefix", "cmake.module", "cmake.root")
# What a cmake.root entry point's name becomes: <name>_ROOT, a CMake variable (no list
# separator, quote, `$` or blank: the name is used as it is written).
_ROOT_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
# Where find_package looks under a prefix's <name>* folder (CMake's search procedure,
# both its Windows- and Unix-style entries: CMake searches all of them everywhere).
CONFIG_GLOBS = (
    "*onfig.cmake", "[Cc][Mm]ake/*onfig.cmake", "[Cc][Mm]ake/*/*onfig.cmake",
    "lib*/cmake/*/*onfig.cmake", "share/cmake/*/*onfig.cmake", "lib/*/cmake/*/*onfig.cmake",
    "lib*/*/*onfig.cmake", "share/*/*onfig.cmake", "lib*/*/[Cc][Mm]ake/*onfig.cmake",
    "share/*/[Cc][Mm]ake/*onfig.cmake",
)
_CONFIG_NAME = re.compile(r"^(.+?)(?:Config|-config)\.cmake$")
_LIBRARY = re.compile(r"\.(?:so(?:\.\d+)*|dylib|dll|lib|a|pyd)$")
_NOT_PACKAGES = (".dist-info", ".egg-info", ".data")
_SKIPPED_DIRS = frozenset({"__pycache__"})
# A toolkit's programs that are copied, not linked: the compiler CMake is given.
_COPIED_PROGRAMS = frozenset({"nvcc"})


@dataclass(frozen=True)
class EntryFolder:
    """The folder a ``cmake.prefix``/``cmake.module``/``cmake.root`` entry point names."""

    group: str
    label: str  # "<distribution>: <name> = <value>", for messages
    path: str
    name: str  # the entry point's name: for cmake.root, the CMake package <name>_ROOT points at


@dataclass
class BuildEnvironment:
    """The build environment's site folders, its CMake packages and entry-point folders,
    and where they are mirrored."""

    mirror_root: Path
    site_dirs: list[str]
    stamps: list[list[Any]]  # [folder, mtime_ns] of each site folder: a change means a new scan
    packages: dict[str, str] = field(default_factory=dict)  # top-level folder name -> its path
    entries: list[EntryFolder] = field(default_factory=list)
    # Mirrored folders that are no CMake package: the `nvidia` folder of a CUDA toolkit from
    # wheels, and of NVIDIA's library wheels a build links, added by the build (never part of the
    # scan's record).  NVIDIA's wheels share that folder across site folders (pip's isolated
    # build puts [build-system] requires and the hook's requirements into two): each site
    # folder's is merged into one mirror, the first one's file winning.
    toolkits: dict[str, list[str]] = field(default_factory=dict)

    def add_toolkit(self, root: Path) -> None:
        """Mirror the top-level folder of the site folder that holds ``root`` (``<site>/nvidia/cu13``)."""
        top = Path(os.path.abspath(root))
        while top.parent != top and str(top.parent) not in self.site_dirs:
            top = top.parent
        if top.parent == top:
            raise ValueError(f"{root} lies in none of the build environment's site folders")
        sources = self.toolkits.setdefault(top.name, [])
        if str(top) not in sources:
            sources.append(str(top))

    def mirrored_folders(self) -> dict[str, list[str]]:
        """Each mirrored folder's name and its sources (one for a CMake package)."""
        return {**{name: [source] for name, source in self.packages.items()}, **self.toolkits}

    def mirrored(self, path: str) -> str:
        """``path`` inside the mirror when it lies in a mirrored folder, else as it is."""
        for name, sources in self.mirrored_folders().items():
            for source in sources:
                if path == source or path.startswith(source + os.sep):
                    return str(self.mirror_root / name) + path[len(source):]
        return path

    def prefix_path(self) -> list[str]:
        """The mirror first (it shadows the throw-away folders), then the entry points' folders
        and the site folders themselves, for layouts the mirror does not cover."""
        mirror = [str(self.mirror_root)] if self.mirrored_folders() else []
        entries = [self.mirrored(e.path) for e in self.entries if e.group == "cmake.prefix"]
        return _unique([*mirror, *entries, *self.site_dirs])

    def module_path(self) -> list[str]:
        return _unique(self.mirrored(e.path) for e in self.entries if e.group == "cmake.module")

    def root_defines(self) -> dict[str, str]:
        """``<Name>_ROOT`` for each ``cmake.root`` entry point (scikit-build-core's convention), its
        folders joined as a CMake list when several distributions name one package."""
        roots: dict[str, list[str]] = {}
        for entry in self.entries:
            if entry.group == "cmake.root":
                roots.setdefault(f"{entry.name}_ROOT", []).append(self.mirrored(entry.path))
        return {name: ";".join(_unique(folders)) for name, folders in roots.items()}

    def to_record(self) -> dict[str, Any]:
        return {"format": RECORD_FORMAT, "stamps": self.stamps, "packages": self.packages,
                "entries": [[e.group, e.label, e.path, e.name] for e in self.entries]}


def record_path(build_dir: Path) -> Path:
    return Path(state_path(build_dir, BUILD_ENV_RECORD))


def site_dirs(project_root: Path) -> list[str]:
    """The folders of ``sys.path`` that hold installed distributions, in import order: the
    ``site-packages`` folders, and others with a ``.dist-info`` in them outside the project
    (an editable install or ``python setup.py`` puts the project's own folders there), never
    one inside another (setuptools puts its ``_vendor`` folder on ``sys.path``)."""
    project = str(project_root.absolute())
    found: list[str] = []
    for folder in _unique(os.path.abspath(entry or os.curdir) for entry in sys.path):
        if any(folder.startswith(other + os.sep) for other in found) or not os.path.isdir(folder):
            continue
        if os.path.basename(folder) in ("site-packages", "dist-packages") or (
                folder != project and not folder.startswith(project + os.sep) and _holds_distributions(folder)):
            found.append(folder)
    return found


def _holds_distributions(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(e.name.endswith(".dist-info") for e in entries)
    except OSError:  # unreadable: nothing CMake could read there either
        return False


def scan(build_dir: Path, project_root: Path) -> BuildEnvironment:
    """The build environment as the last scan found it when its folders are unchanged, else scanned anew."""
    folders = site_dirs(project_root)
    stamps = [[folder, _mtime_ns(folder)] for folder in folders]
    env = BuildEnvironment(build_dir.absolute() / MIRROR_FOLDER, folders, stamps)
    record = read_json(record_path(build_dir))
    if isinstance(record, dict) and record.get("format") == RECORD_FORMAT and record.get("stamps") == stamps:
        try:
            env.packages = dict(record["packages"])
            env.entries = [EntryFolder(*entry) for entry in record["entries"]]
            return env
        except (KeyError, TypeError, ValueError):  # not what the scan writes: scanned anew
            env.packages = {}
    env.entries = _entry_folders(folders)
    packages: dict[str, str] = {}
    for folder in reversed(folders):  # the first folder on sys.path wins, as for an import
        packages.update({p.name: str(p) for p in _cmake_packages(Path(folder))})
        packages.update({_top_level(e.path, folder): folder + os.sep + _top_level(e.path, folder)
                         for e in env.entries if e.path.startswith(folder + os.sep)})
    env.packages = dict(sorted(packages.items()))
    return env


def _top_level(path: str, folder: str) -> str:
    return path[len(folder) + 1:].split(os.sep, maxsplit=1)[0]


def _cmake_packages(site_dir: Path) -> Iterable[Path]:
    """Top-level folders of ``site_dir`` where find_package(<Name>) finds a <Name>Config.cmake
    or <name>-config.cmake: CMake only looks in ``<prefix>/<name>*/...``."""
    with os.scandir(site_dir) as entries:
        folders = sorted(Path(e.path) for e in entries
                         if e.is_dir() and not e.name.endswith(_NOT_PACKAGES) and e.name not in _SKIPPED_DIRS)
    for folder in folders:
        lowered = folder.name.lower()
        for pattern in CONFIG_GLOBS:
            names = (_CONFIG_NAME.match(config.name) for config in folder.glob(pattern))
            if any(match and lowered.startswith(match.group(1).lower()) for match in names):
                yield folder
                break


def _entry_folders(folders: list[str]) -> list[EntryFolder]:
    # importlib.metadata costs ~10 ms (more with a cold disk): only imported when the build
    # environment changed since the last scan.
    import importlib.metadata

    found = []
    for group in ENTRY_POINT_GROUPS:
        for entry in importlib.metadata.entry_points(group=group):
            label = f"{entry.dist.name if entry.dist else '?'}: {entry.name} = {entry.value}"
            variable = f"{entry.name}_ROOT" if group == "cmake.root" else _VARIABLES[group]
            if group == "cmake.root" and not _ROOT_NAME.match(entry.name):
                console.warn(f"the {group} entry point {label} names no CMake package buildkit can define "
                             f"{variable} for (letters, digits, `_`, `.`, `+` and `-` only); it is left out.")
                continue
            folder = _module_folder(entry, folders)
            if folder is None:
                console.warn(f"the {group} entry point {label} names no module folder buildkit can find; "
                             f"it is not added to {variable}.")
                continue
            found.append(EntryFolder(group, label, folder, entry.name))
    return found


_VARIABLES = {"cmake.prefix": "CMAKE_PREFIX_PATH", "cmake.module": "CMAKE_MODULE_PATH"}


def _module_folder(entry: Any, folders: list[str]) -> str | None:
    """The folder of the entry point's module (a package's own folder, a module file's parent),
    looked up where its distribution is installed: the module is never imported."""
    parts = entry.value.split(":")[0].strip().split(".")
    bases = [str(entry.dist.locate_file(""))] if entry.dist is not None else []
    for base in [*bases, *folders]:
        candidate = os.path.join(os.path.abspath(base), *parts)
        if os.path.isdir(candidate):
            return candidate
        if os.path.isfile(candidate + ".py"):
            return os.path.dirname(candidate)
    return None


# ----------------------------------------------------------------- mirror

def sync_mirror(env: BuildEnvironment, build_dir: Path) -> int:
    """Bring ``<build>/build-env/`` in line with the environment's CMake packages, rewriting
    only files whose bytes changed; returns how many were written.  Call with the build
    folder's lock held."""
    path = record_path(build_dir)
    old = read_json(path)
    old_files = old.get("files", {}) if isinstance(old, dict) and old.get("format") == RECORD_FORMAT else {}
    files: dict[str, dict[str, Any]] = {}
    written = 0
    for name, sources in env.mirrored_folders().items():
        previous = old_files.get(name, {})
        known = previous.get("stats", {}) if previous.get("source") == sources else {}
        stats, count = _sync_tree(sources, str(env.mirror_root / name), known, toolkit=name in env.toolkits)
        files[name] = {"source": sources, "stats": stats}
        written += count
    _remove_stale_packages(env)
    if written:
        console.info(f"mirrored the build environment's CMake packages ({', '.join(env.mirrored_folders())}) into "
                     f"{env.mirror_root}: {written} file(s) changed")
    record = {**env.to_record(), "files": files}
    if record != old:
        write_json(path, record)
    return written


def _sync_tree(sources: list[str], target: str, known: dict[str, list[int]],
               toolkit: bool = False) -> tuple[dict[str, list[int]], int]:
    # os.path on strings, not pathlib: this runs for every file on every build, no-op develops too.
    stats: dict[str, list[int]] = {}
    written = 0
    for source, folder, subdirs, names in ((s, *step) for s in sources for step in os.walk(s)):
        subdirs[:] = [d for d in subdirs if d not in _SKIPPED_DIRS]
        for name in names:
            origin = os.path.join(folder, name)
            relative = origin[len(source) + 1:]
            if relative in stats:  # an earlier site folder's file of that name wins
                continue
            copy = os.path.join(target, relative)
            if _LIBRARY.search(name):
                written += point_symlink(copy, origin)
                stats[relative] = []
                continue
            state = os.stat(origin)
            if toolkit and state.st_mode & 0o111 and name not in _COPIED_PROGRAMS:
                written += point_symlink(copy, origin)
                stats[relative] = []
                continue
            key = [state.st_size, state.st_mtime_ns, *_stat(copy)]
            if known.get(relative) != key:
                written += _copy_if_changed(origin, copy, state.st_mode & 0o777)
                key = [state.st_size, state.st_mtime_ns, *_stat(copy)]
            stats[relative] = key
    if toolkit:
        written += toolkit_mirror.development_links(target, stats)
    _remove_unlisted(target, stats)
    if toolkit:
        written += toolkit_mirror.sized_library_folder(target, stats)
    return stats, written


def _copy_if_changed(origin: str, copy: str, mode: int) -> int:
    with open(origin, "rb") as handle:
        data = handle.read()
    if _stat(copy)[:1] == [len(data)] and not os.path.islink(copy):
        with open(copy, "rb") as handle:
            if handle.read() == data:
                return 0
    if os.path.islink(copy):
        os.unlink(copy)
    write_atomic(Path(copy), data, mode=mode)
    return 1


def _remove_unlisted(target: str, listed: dict[str, Any]) -> None:
    """Files the package no longer has, and the folders that leaves empty."""
    for folder, _subdirs, names in os.walk(target, topdown=False):
        for name in names:
            path = os.path.join(folder, name)
            if path[len(target) + 1:] not in listed:
                os.unlink(path)
        if folder != target and not os.listdir(folder):
            os.rmdir(folder)


def _remove_stale_packages(env: BuildEnvironment) -> None:
    """A mirrored package that left the environment would still be found: it goes, by name."""
    if not env.mirror_root.is_dir():
        return
    for stale in sorted(p for p in env.mirror_root.iterdir() if p.name not in env.mirrored_folders()):
        console.info(f"{stale.name} is no longer in the build environment: removing its mirror {stale}")
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale)
        else:
            stale.unlink()


def _stat(path: str) -> list[int]:
    try:
        state = os.lstat(path)
    except OSError:
        return []
    return [state.st_size, state.st_mtime_ns, state.st_ino]


def _mtime_ns(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
