"""The edit-compile loop's ``buildkit develop``: ninja and the install, without loading the project.

Reading ``[tool.buildkit]``, the options and the build environment means importing
most of buildkit (about 0.17 s of a 2-core machine's CPU, as much as ninja's own
no-op on a PyTorch-sized tree).  After a successful ``develop`` or ``build``, the
record here keeps what that run depended on besides the sources ninja and the
install step check themselves: the environment, the interpreter, the project's
configuration files, the build folder's records, the tools, git's HEAD, the import
path's folders and buildkit's own files.  When all of them are unchanged, a run is
ninja and the install step; anything else (a changed input, CMake regenerating the
build, an install that changes which files are installed) goes on to the full
command, which records again.

This is the first of two stages, and it imports only what the interpreter has loaded
at start-up plus ``fcntl``: it checks the record and starts ninja, so that ninja's
own no-op (its CMake glob check included) runs on one core while the second stage
(:mod:`buildkit.frontends.noop_finish`: the install step's modules, its check of
every installed source) loads and runs on the other.  Every module this one imports
costs the no-op its whole import time (typing ~8 ms, json ~6 ms, pathlib ~6 ms,
hashlib ~4 ms on a 2-core machine, measured with ``-X importtime``), which is why
the record is marshal data and paths are strings here.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from buildkit._util import console, spawn
from buildkit.builder import install_summary
from buildkit.builder.build_lock import held_here, lock_build_folder
from buildkit.builder.ninja_status import command_line, is_bookkeeping, log_stamp, status

try:  # built into CPython; hashlib would load OpenSSL's library for the same digest (~4 ms, measured)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - interpreters without it
    from hashlib import blake2b

RECORD = os.path.join("build", ".buildkit", "noop-develop.marshal")
# The record's first line: marshal's format belongs to the interpreter's version.
HEADER = f"buildkit no-op record 2, python {sys.hexversion:x}\n".encode()
# Variables a shell changes between commands without changing what a build does.
VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "TERM_SESSION_ID", "WINDOWID"})
# What the first stage needs from a record, with its type.
FIELDS = {"files": list, "inputs": dict, "build_dir": str, "build_command": list, "jobs": int,
          "install_prefix": str, "cmake": str, "build_type": str, "install_summary": str}


def setup_py_request(argv: list[str], script: str) -> str | None:
    """The project root for ``python setup.py develop`` (nothing else); None otherwise."""
    if argv != ["develop"] or os.environ.get("VERBOSE", "0") not in {"", "0"}:
        return None
    return os.path.dirname(os.path.abspath(script)) if os.path.basename(script) == "setup.py" \
        and os.path.isfile(script) else None


def request(argv: list[str]) -> tuple[str, bool] | None:
    """(project root, register) for a plain ``develop``/``build`` [path]; None for anything else."""
    if not argv or argv[0] not in {"develop", "build"} or len(argv) > 2 or any(a.startswith("-") for a in argv):
        return None
    if os.environ.get("VERBOSE", "0") not in {"", "0"}:
        return None  # a verbose run shows every decision: the full command makes them
    return os.path.abspath(argv[1] if len(argv) == 2 else "."), argv[0] == "develop"


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
    # sys.path[0] is the script's folder or the working directory: `buildkit` and
    # `python -m buildkit` differ there, and neither holds installed packages.
    return [*own, *_git_files(root), *(p for p in sys.path[1:] if p and os.path.isdir(p))]


def buildkit_files() -> list[str]:
    """buildkit's own modules and their folders (a folder's time moves when a module is
    added or removed): a changed buildkit decides anew."""
    found = []
    for folder, subfolders, names in os.walk(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):
        subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
        found += [folder, *(os.path.join(folder, name) for name in sorted(names) if name.endswith(".py"))]
    return found


def _environment() -> str:
    items = sorted(f"{k}={v}" for k, v in os.environ.items() if k not in VOLATILE)
    return blake2b("\0".join(items).encode("utf-8", "surrogateescape")).hexdigest()


def inputs(root: str, register: bool, files: list[str]) -> dict:
    """What the no-op depends on now: ``files`` are the recorded run's own (its build
    folder's records, tools, package folder, buildkit's modules)."""
    every = [*_fixed_files(root), *files]
    return {"register": register, "python": sys.executable, "prefix": sys.prefix,
            "environment": _environment(), "files": {path: stat_of(path) for path in every}}


def read_record(root: str) -> dict | None:
    """The record of the last develop/build in ``root``; None when missing, of another
    interpreter, or not one."""
    try:
        with open(os.path.join(root, RECORD), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if not data.startswith(HEADER):
        return None
    try:
        record = marshal.loads(data[len(HEADER):])
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(record, dict) or any(not isinstance(record.get(key), kind) for key, kind in FIELDS.items()):
        return None
    return record


def record_bytes(record: dict) -> bytes:
    return HEADER + marshal.dumps(record)


def answer_setup_py(argv: list[str]) -> bool:
    """``python setup.py develop`` with nothing to do: True once answered (a failed ninja is
    reported and exits, as in the full command)."""
    root = setup_py_request(argv[1:], argv[0] if argv else "")
    if root is None:
        return False
    # Start-up cost: the error reporting (rich's box, buildkit's error types) loads only when
    # the record makes a no-op possible (measured with -X importtime, like the module's).
    from buildkit.errors import reporting_errors

    return reporting_errors(lambda: run_if_current(root, register=True))


def run_if_current(root: str, register: bool) -> bool:
    """Build and install when nothing but sources changed since the recorded run; True when
    that was the whole command.  False hands over to the full command: an input changed,
    CMake regenerated the build, or the install changed which files are installed (the
    editable registration and the stub may depend on that)."""
    started = time.perf_counter()
    record = read_record(root)
    if record is None or record["inputs"] != inputs(root, register, record["files"]):
        return False
    if held_here(record["build_dir"]):
        return False  # `buildkit develop` runs setup.py in-process, holding the lock: it decides
    with lock_build_folder(record["build_dir"]):
        log_before = log_stamp(record["build_dir"])
        try:
            build = spawn.start(record["build_command"])
        except OSError:
            return False  # the recorded tool is gone: the full command says so, or finds another
        try:
            # While ninja checks its own inputs on one core, this one checks the package tree's.
            current, scans = install_summary.check(record["install_summary"])
            seen, working = _read_until_work(build.stdout)
            if not working and build.wait() == 0 and current and not regenerated(record):
                build.stdout.close()
                _write_logs(record, seen)
                console.info(f"up to date ({time.perf_counter() - started:.2f} s)")
                return True
            spawn.unread(build, seen)
            # Start-up cost: the install step and the build display (~35 ms, measured) load only
            # when ninja has work, failed, or the package tree may have changed.
            from buildkit.frontends import noop_finish

            return noop_finish.finish(record, build, started, scans, log_before)
        finally:
            if build.poll() is None:  # an error before ninja was waited for: don't leave it behind
                build.terminate()
                build.wait()


def _read_until_work(stream) -> tuple[list[bytes], bool]:
    """ninja's output up to its first edge that is not CMake's bookkeeping, and whether
    there was one (False: the output ended first)."""
    seen = []
    for raw in stream:
        seen.append(raw)
        parsed = status(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
        if parsed is not None and not is_bookkeeping(parsed[2]):
            return seen, True
    return seen, False


def regenerated(record: dict) -> bool:
    """Whether a CMake run inside ninja rewrote the build (the full command reads it again)."""
    return any(stat_of(path) != record["inputs"]["files"].get(path) for path in regenerated_files(record["build_dir"]))


def regenerated_files(build_dir: str) -> list[str]:
    """What a CMake run inside ninja rewrites."""
    return [os.path.join(build_dir, "CMakeCache.txt"), os.path.join(build_dir, "build.ninja")]


def _write_logs(record: dict, output: list[bytes]) -> None:
    """The build step's log, as :func:`buildkit.builder.build_output.run_step` writes it."""
    logs = os.path.join(record["build_dir"], ".buildkit", "logs")
    data = b"".join([f"$ {command_line(record['build_command'])}\n".encode(), *output])
    for name in ("build.log", "last.log"):
        with open(os.path.join(logs, name), "wb") as handle:
            handle.write(data)
