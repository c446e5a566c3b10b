"""The no-op develop's record: what the last successful develop/build depended on.

Read by the no-op's first stage (:mod:`buildkit.frontends.noop_develop`) before
anything but the interpreter's start-up modules is loaded, so it is marshal data and
its paths are strings (see that module for the import costs); written after a
successful develop/build by :func:`buildkit.frontends.noop_finish.record`.
"""

from __future__ import annotations

import os
import sys

from buildkit._util import marshal_file
from buildkit._util.switches import REBUILDING_FOR_IMPORT
from buildkit.builder.build_state import BUILD_NINJA, CMAKE_CACHE, NOOP_RECORD, state_path

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op develop goes without
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

try:  # built into CPython; hashlib would load OpenSSL's library for the same digest (~4 ms, measured)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - interpreters without it
    from hashlib import blake2b

HEADER = marshal_file.header("no-op record 7")
# Variables a shell changes between commands without changing what a build does, and the
# mark an editable install's rebuild on import gives its build (buildkit/editable_rebuild.py).
VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "TERM_SESSION_ID", "WINDOWID",
                      REBUILDING_FOR_IMPORT})
# The environment and import path this process started with, taken when the no-op's modules
# load: a develop that runs setuptools in-process gets `PLAT` set and setuptools' vendored
# folder on sys.path, which the next command starts without (its record must not differ there).
# sys.path[0] is the script's folder or the working directory: `buildkit` and `python -m
# buildkit` differ there, and neither holds installed packages; `python -P` (the rebuild on
# import's build process) puts neither there.
_STARTING_ENVIRONMENT = dict(os.environ)
_STARTING_PATH = tuple(sys.path if sys.flags.safe_path else sys.path[1:])
# What the first stage needs from a record, with its type.
FIELDS = {"files": list, "folders": list, "packages": list, "roots": list, "inputs": dict, "build_dir": str,
          "build_command": list, "jobs": int, "install_prefix": str, "install_root": str, "cmake": str,
          "build_type": str, "install_summary": str, "build_types": list, "distributed": bool}
# What the first stage needs of each other build type of a build-type list (its own build
# folder, built and installed after the primary one): "build_dir", "build_command", "install_summary".
# The sources a setup.py finds by globbing a folder (buildkit.torch projects: the suffixes of
# builder/configure/torch_project.py's LANGUAGES): a folder's record is the list of these.
LISTED_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".cu")
# What a package folder holds that names no module: the interpreter's bytecode cache, which
# the first import after a build writes there.
UNLISTED_IN_PACKAGES = frozenset({"__pycache__"})


def stat_of(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def _git_files(root: str) -> list[str]:
    git = os.path.join(root, ".git")
    files = [os.path.join(git, "HEAD"), os.path.join(git, "packed-refs")]
    try:
        with open(files[0], encoding="utf-8") as handle:
            head = handle.read().strip()
    except OSError:
        return files
    if head.startswith("ref: "):
        files.append(os.path.join(git, head[5:]))
    return files


def _fixed_files(root: str) -> list[str]:
    """What every run depends on, named without the project: its configuration files, git's
    HEAD (the version may come from it), the import path's folders (an installed or removed
    package changes the build environment's CMake packages)."""
    own = [os.path.join(root, name) for name in ("pyproject.toml", "setup.py", "setup.cfg")]
    return [*own, *_git_files(root), *(p for p in _STARTING_PATH if p and os.path.isdir(p))]


def buildkit_files() -> list[str]:
    """buildkit's own modules and their folders (a folder's time moves when a module is
    added or removed): a changed buildkit decides anew."""
    found = []
    for folder, subfolders, names in os.walk(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        found += [folder, *(os.path.join(folder, name) for name in sorted(names) if name.endswith(".py"))]
    return found


def _environment() -> str:
    items = sorted(f"{k}={v}" for k, v in _STARTING_ENVIRONMENT.items() if k not in VOLATILE)
    return blake2b("\0".join(items).encode("utf-8", "surrogateescape")).hexdigest()


def inputs(root: str, register: bool, files: list[str], folders: Sequence[str] = (),
           fixed: Sequence[str] | None = None, packages: Sequence[str] = (), roots: Sequence[str] = ()
           ) -> dict[str, Any]:
    """What the no-op depends on now: ``files`` are the recorded run's own (its build
    folder's records, tools, buildkit's modules), ``folders`` those whose sources a
    buildkit.torch setup.py found by globbing, ``packages`` the package folders (the modules
    and packages there: the editable registration and a setup.py's find_packages() see
    them), ``roots`` the folders whose top-level packages and modules decide the layout (the
    package root, where [tool.setuptools]' packages.find and a setup.py's find_packages() look
    and wheel-root installs put top-level modules; ``src/`` and ``python/``, where the tree's
    layout is searched), ``fixed`` those of every run (by default its configuration files, git's HEAD and
    the import path's folders).  A folder counts by its listing, never its time: an editor
    that saves through a new file and a rename moves a folder's time, and so does the
    install step that puts a rebuilt module into the package folder (CMake replaces the
    file), after which the next develop would be the full command (a buildkit.torch
    project's setup.py, which imports torch)."""
    every = [*(_fixed_files(root) if fixed is None else fixed), *files]
    return {"register": register, "python": sys.executable, "prefix": sys.prefix,
            "environment": _environment(), "files": {path: stat_of(path) for path in every},
            "listings": {folder: _sources_in(folder) for folder in folders},
            "modules": {folder: _modules_in(folder) for folder in packages},
            "roots": {folder: _importables_in(folder) for folder in roots}}


def _sources_in(folder: str) -> list[str] | None:
    try:
        return sorted(name for name in os.listdir(folder) if name.endswith(LISTED_SUFFIXES))
    except OSError:
        return None


def _modules_in(folder: str) -> list[str] | None:
    """A package folder's entries, less the bytecode cache and hidden names (an editor's swap
    and lock files, the temporary file of an atomic save or install)."""
    try:
        return sorted(name for name in os.listdir(folder)
                      if not name.startswith(".") and name not in UNLISTED_IN_PACKAGES)
    except OSError:
        return None


def _importables_in(folder: str) -> list[str] | None:
    """The top-level modules and packages a package root holds, as the layout and
    find_packages() see them: each ``name.py`` and each folder of an import name holding an
    ``__init__.py``; a data file or folder, a build folder, a hidden name do not count."""
    try:
        with os.scandir(folder) as entries:
            found = [entry for entry in entries if entry.name.removesuffix(".py").isidentifier()]
    except OSError:
        return None
    return sorted(f"{entry.name}/" if entry.is_dir() else entry.name for entry in found
                  if (entry.name.endswith(".py") and not entry.is_dir())
                  or (entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py"))))


def record_path(build_dir: str) -> str:
    """Where the record of a build in ``build_dir`` lies.  The no-op develop reads the
    default build folder's (:func:`buildkit._util.interpreter.default_build_dir`: another
    ``build-dir`` is known only once the settings are read); an editable install's rebuild
    on import, the one its install recorded."""
    return state_path(build_dir, NOOP_RECORD)


def read_record(build_dir: str) -> dict[str, Any] | None:
    """The record of the last develop/build in ``build_dir``; None when missing, of another
    interpreter, or not one."""
    record = marshal_file.read(record_path(build_dir), HEADER)
    if record is None or any(not isinstance(record.get(key), kind) for key, kind in FIELDS.items()):
        return None
    return record


def write_record(build_dir: str, record: dict[str, Any]) -> None:
    marshal_file.write(record_path(build_dir), HEADER, record)


def changed_inputs(root: str, register: bool, build_dir: str) -> list[str]:
    """The inputs of the record in ``build_dir`` that differ now, named as a message says them
    (paths relative to ``root``); empty where there is no record or nothing differs (the no-op's
    first stage compares the same, and hands over at the first difference)."""
    record = read_record(build_dir)
    if record is None:
        return []
    recorded = record["inputs"]
    now = inputs(root, register or recorded.get("register") is True, record["files"], record["folders"],
                 packages=record["packages"], roots=record["roots"])

    def named(path: str) -> str:
        inside = os.path.relpath(path, root)
        return path if inside.startswith(os.pardir) else inside

    found = [f"the interpreter ({now[key]})" for key in ("python", "prefix") if recorded[key] != now[key]]
    found += ["the editable registration (a develop after a build)"] if recorded["register"] != now["register"] else []
    found += ["the environment variables"] if recorded["environment"] != now["environment"] else []
    found += [named(path) for path, stat in now["files"].items() if recorded["files"].get(path) != stat]
    found += [f"the sources in {named(folder)}" for folder, listing in now["listings"].items()
              if recorded["listings"].get(folder) != listing]
    found += [f"the modules in {named(folder)}" for folder, listing in now["modules"].items()
              if recorded["modules"].get(folder) != listing]
    found += [f"the top-level packages and modules in {named(folder)}" for folder, listing in now["roots"].items()
              if recorded["roots"].get(folder) != listing]
    return found


def regenerated(record: dict[str, Any], build_dir: str | None = None) -> bool:
    """Whether a CMake run inside ninja rewrote the build (the full command reads it again);
    ``build_dir``: of another build type's folder, else the primary one's."""
    return any(stat_of(path) != record["inputs"]["files"].get(path)
               for path in regenerated_files(build_dir or record["build_dir"]))


def regenerated_files(build_dir: str) -> list[str]:
    """What a CMake run inside ninja rewrites."""
    return [os.path.join(build_dir, CMAKE_CACHE), os.path.join(build_dir, BUILD_NINJA)]
