"""The edit-compile loop's ``buildkit develop``: ninja and the install, without loading the project.

Reading ``[tool.buildkit]``, the options and the build environment means importing
most of buildkit (about 0.17 s of a 2-core machine's CPU, as much as ninja's own
no-op on a PyTorch-sized tree).  After a successful ``develop`` or ``build``, the
record here keeps what that run depended on besides the sources ninja and the
install step check themselves: the environment, the interpreter, the project's
configuration files, the build folder's records, the tools, git's HEAD and the
import path's folders.  When all of them are unchanged, a run is ninja and the
install step (its check beside ninja); anything else (a changed input, CMake
regenerating the build, an install that changes which files are installed) goes
on to the full command, which records again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from buildkit._util.fileutil import read_json, write_atomic
from buildkit.builder.build_lock import held_here, lock_build_folder
from buildkit.builder.build_output import print_summary, run_step
from buildkit.builder.install_record import CheckStopped
from buildkit.builder.install_step import InstallCheck, PackageTreeInstall
from buildkit.errors import reporting_errors

if TYPE_CHECKING:
    from buildkit.project import Project

RECORD = Path("build") / ".buildkit" / "noop-develop.json"
FORMAT = 1
# Variables a shell changes between commands without changing what a build does.
VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "TERM_SESSION_ID", "WINDOWID"})


def setup_py_request(argv: list[str], script: str) -> Path | None:
    """The project root for ``python setup.py develop`` (nothing else); None otherwise."""
    if argv != ["develop"] or os.environ.get("VERBOSE", "0") not in {"", "0"}:
        return None
    path = Path(script)
    return path.resolve().parent if path.name == "setup.py" and path.is_file() else None


def request(argv: list[str]) -> tuple[Path, bool] | None:
    """(project root, register) for a plain ``develop``/``build`` [path]; None for anything else."""
    if not argv or argv[0] not in {"develop", "build"} or len(argv) > 2 or any(a.startswith("-") for a in argv):
        return None
    if os.environ.get("VERBOSE", "0") not in {"", "0"}:
        return None  # a verbose run shows every decision: the full command makes them
    return Path(argv[1] if len(argv) == 2 else ".").resolve(), argv[0] == "develop"


def _stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def _git_files(root: Path) -> list[str]:
    git = root / ".git"
    files = [str(git / "HEAD"), str(git / "packed-refs")]
    try:
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return files
    if head.startswith("ref: "):
        files.append(str(git / head[5:]))
    return files


def _fixed_files(root: Path) -> list[str]:
    """What every run depends on, named without the project: its configuration files, git's
    HEAD (the version may come from it), the import path's folders (an installed or removed
    package changes the build environment's CMake packages)."""
    own = [str(root / name) for name in ("pyproject.toml", "setup.py", "setup.cfg")]
    # sys.path[0] is the script's folder or the working directory: `buildkit` and
    # `python -m buildkit` differ there, and neither holds installed packages.
    return [*own, *_git_files(root), *(p for p in sys.path[1:] if p and os.path.isdir(p))]


def _buildkit_files() -> list[str]:
    """buildkit's own modules: a changed buildkit decides anew."""
    top = Path(__file__).resolve().parents[1]
    return sorted(str(p) for p in top.rglob("*.py"))


def _environment() -> str:
    items = sorted((k, v) for k, v in os.environ.items() if k not in VOLATILE)
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()


def _inputs(root: Path, register: bool, files: list[str]) -> dict:
    every = [*_fixed_files(root), *files, *_buildkit_files()]
    return {"format": FORMAT, "register": register, "python": sys.executable, "prefix": sys.prefix,
            "environment": _environment(), "files": {path: _stat(path) for path in every}}


def answer_setup_py(argv: list[str]) -> bool:
    """``python setup.py develop`` with nothing to do: True once answered (a failed ninja is
    reported and exits, as in the full command)."""
    root = setup_py_request(argv[1:], argv[0] if argv else "")
    return root is not None and reporting_errors(lambda: run_if_current(root, register=True))


def run_if_current(root: Path, register: bool) -> bool:
    """Build and install when nothing but sources changed since the recorded run; True when
    that was the whole command.  False hands over to the full command: an input changed,
    CMake regenerated the build, or the install changed which files are installed (the
    editable registration and the stub may depend on that)."""
    started = time.perf_counter()
    record = read_json(root / RECORD)
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return False
    inputs = _inputs(root, register, record.get("files", []))
    if record.get("inputs") != inputs:
        return False
    build_dir = Path(record["build_dir"])
    if held_here(build_dir):
        return False  # `buildkit develop` runs setup.py in-process, holding the lock: it decides
    installer = PackageTreeInstall(build_dir, Path(record["install_prefix"]), Path(record["cmake"]),
                                   record["build_type"])
    with lock_build_folder(build_dir):
        # The install check (thousands of stats) runs on the other core while ninja does its
        # own; when ninja then did no work, nothing it could have changed has changed.  A
        # plain thread: concurrent.futures imports logging (15 ms, measured).
        # When ninja starts real work the check's answer will not be used: it stops, and
        # leaves both cores to the compiler.
        checked: list[InstallCheck] = []
        stop = threading.Event()
        checking = threading.Thread(target=_check_into, args=(installer, stop, checked), daemon=True)
        checking.start()
        build = run_step("build", record["build_command"], build_dir=build_dir, verbose=False,
                         jobs=record["jobs"], on_work=stop.set)
        checking.join()
        if any(_stat(path) != inputs["files"].get(path) for path in _regenerated(build_dir)):
            return False  # CMake regenerated the build: the full command reads it again
        untouched = build.no_work and not build.steps and bool(checked)
        installed = installer.install(build, checked[0] if untouched else None)
        if installed is not None and installer.outputs_changed:
            return False
    timings = [("build", build.seconds), *([("install", installed.seconds)] if installed else [])]
    print_summary(timings if installed or build.steps else [("build", time.perf_counter() - started)], build.steps)
    return True


def _check_into(installer: PackageTreeInstall, stop: threading.Event, checked: list[InstallCheck]) -> None:
    try:
        checked.append(installer.check(stop))
    except CheckStopped:
        pass  # ninja did real work: the install checks again after it


def _regenerated(build_dir: Path) -> list[str]:
    """What a CMake run inside ninja rewrites."""
    return [str(build_dir / "CMakeCache.txt"), str(build_dir / "build.ninja")]


def record(project: "Project", register: bool) -> None:
    """After a successful develop/build of ``project``: what a no-op depends on."""
    if project.build_dir != project.root / "build" or not project.built:
        return  # another build folder: the no-op goes through the full command
    driver = project.driver()
    tools = driver._tools()
    jobs = driver.job_count()
    build_dir = project.build_dir
    files = _regenerated(build_dir)
    # The build folder's records, less the install's own (which the install step checks
    # itself, and rewrites after each edit) and this one.
    files += [str(p) for p in sorted((build_dir / ".buildkit").glob("*.json"))
              if p.name != RECORD.name and not p.name.startswith("install-")]
    files += [str(tool.path) for tool in tools.tools().values() if tool is not None]
    files += [str(project.settings.package_dir), str(project.root / project.settings.version_file),
              str(project.root / project.settings.readme)]  # the registration's METADATA holds the README
    stub = project.settings.extension
    files += [str(project.root / source) for source in (stub.sources if stub else ())]
    files = list(dict.fromkeys(files))
    write_atomic(project.root / RECORD, json.dumps({
        "format": FORMAT, "files": files, "inputs": _inputs(project.root, register, files),
        "build_dir": str(build_dir), "build_command": driver.build_command(jobs), "jobs": jobs,
        "install_prefix": str(project.install_prefix), "cmake": str(tools.cmake.path),
        "build_type": driver.build_type(),
    }).encode("utf-8"))
