"""The edit-compile loop's ``buildkit develop``: ninja and the install, without loading the project.

Reading ``[tool.buildkit]``, the options and the build environment means importing
most of buildkit (about 0.17 s of a 2-core machine's CPU, as much as ninja's own
no-op on a PyTorch-sized tree).  After a successful ``develop`` or ``build``, a
record (:mod:`buildkit.frontends.noop_record`) keeps what that run depended on
besides the sources ninja and the install step check themselves.  When all of it is
unchanged, a run is ninja and the install step; anything else (a changed input,
CMake regenerating the build, an install that changes which files are installed)
goes on to the full command, which records again.

This is the first of two stages.  It imports only what the interpreter loaded at
start-up, ``fcntl`` and buildkit's lean modules: it checks the record, starts ninja,
and while ninja checks its own inputs on one core, compares the package tree with
the install step's summary (:mod:`buildkit.builder.install.summary`) on the other.
Nothing to build and nothing to install: that is the whole run.  Otherwise the
second stage (:mod:`buildkit.frontends.noop_finish`) loads the build display and
the install step.  Every module this one imports costs the no-op its whole import
time (typing ~8 ms, json ~6 ms, pathlib ~6 ms, hashlib ~4 ms on a 2-core machine,
measured with ``-X importtime``), so paths are strings and records marshal data.
"""

from __future__ import annotations

import os
import time

from buildkit._util import console, spawn
from buildkit._util.interpreter import default_build_dir
from buildkit._util.switches import switch_setting
from buildkit.builder.build_lock import held_here, lock_build_folder
from buildkit.builder.build_state import LOGS, state_path
from buildkit.builder.install import summary as install_summary
from buildkit.builder.ninja_status import command_line, is_bookkeeping, log_stamp, status
from buildkit.frontends.noop_record import inputs, read_record, regenerated

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op develop goes without
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from buildkit._util.spawn import Output, Process


# The switches a quiet no-op cannot honour, each read as the options read it: a verbose run
# shows every decision, a fresh one configures from scratch, a CMake-only one builds nothing.
# A word the options refuse goes to the full command too, which names it.
HANDED_OVER = ("VERBOSE", "CMAKE_FRESH", "CMAKE_ONLY")


def handed_over() -> bool:
    """Whether a switch in :data:`HANDED_OVER` is on (or spelled as no option accepts)."""
    return any(switch_setting(name) is not False for name in HANDED_OVER)


def setup_py_request(argv: list[str], script: str) -> str | None:
    """The project root for ``python setup.py develop`` (nothing else); None otherwise."""
    if argv != ["develop"] or handed_over():
        return None
    return os.path.dirname(os.path.abspath(script)) if os.path.basename(script) == "setup.py" \
        and os.path.isfile(script) else None


def request(argv: list[str]) -> tuple[str, bool] | None:
    """(project root, register) for a plain ``develop``/``build`` [path]; None for anything else."""
    if not argv or argv[0] not in {"develop", "build"} or len(argv) > 2 or any(a.startswith("-") for a in argv):
        return None
    if handed_over():
        return None
    return os.path.abspath(argv[1] if len(argv) == 2 else "."), argv[0] == "develop"


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


def run_if_current(root: str, register: bool, build_dir: str | None = None, *, for_import: bool = False) -> bool:
    """Build and install when nothing but sources changed since the recorded run; True when
    that was the whole command.  False hands over to the full command: an input changed,
    CMake regenerated the build, or the install changed which files are installed (the
    editable registration and the stub may depend on that).  ``build_dir``: where the
    record is, when known (an editable install's rebuild on import); else the default
    build folder's.

    ``for_import``: asked in a program that imports the project (``buildkit/editable_rebuild.py``),
    this stage alone answers, silently: True when there was nothing to build or install; at
    anything else ninja is stopped at its first edge and False hands over to the import's
    build process.  The import path there is the program's, which may hold more than a
    command's (pytest's folders): the folders recorded are compared, not those on it."""
    record = read_record(build_dir or default_build_dir(root))
    if record is None:
        return False
    # A develop's record serves a build too (the same inputs, and the registration besides):
    # `buildkit develop`, then an editable install's rebuild on import, stays a no-op.
    recorded = record["inputs"]
    registered = register or recorded.get("register") is True
    files, fixed = (list(recorded["files"]), ()) if for_import else (record["files"], None)
    now = inputs(root, registered, files, record["folders"], fixed=fixed, packages=record["packages"],
                 roots=record["roots"])
    if recorded != now:
        return False
    if held_here(record["build_dir"]):
        return False  # `buildkit develop` runs setup.py in-process, holding the lock: it decides
    if not record["build_command"]:  # no CMake part (cmake = false): nothing to build or install
        if not for_import:
            console.up_to_date()
        return True
    with lock_build_folder(record["build_dir"]):  # the primary folder's lock covers the build types' folders
        log_before = log_stamp(record["build_dir"])
        build_started = time.perf_counter()
        others: list[tuple[dict[str, Any], Process]] = []  # a build-type list's other types, built beside
        try:
            others += [(other, spawn.start(other["build_command"])) for other in record["build_types"]]
            build = spawn.start(record["build_command"])
        except OSError:
            _stop_all(process for _, process in others)
            return False  # the recorded tool is gone: the full command says so, or finds another
        try:
            # Work in another type's build, and the full command builds every type.
            if not all(_build_type_current(record, other, process) for other, process in others):
                return False
            current, scans, seen, working = _check_while_building(build, record["install_summary"])
            if not working and build.wait() == 0 and current and not regenerated(record):
                _finish_quietly(build, record["build_dir"], record["build_command"], seen)
                if not for_import:
                    console.up_to_date()
                return True
            if for_import or record["distributed"]:
                # ninja is stopped below, its edge's output removed by ninja. A distributed build's
                # compiles need its session (the build folder's sccache server, sized to the cluster,
                # local when the cluster fails): the full command runs them.
                return False
            spawn.unread(build, seen)
            # Start-up cost: the install step and the build display (~35 ms, measured) load only
            # when ninja has work, failed, or the package tree may have changed.
            from buildkit.frontends import noop_finish

            return noop_finish.finish(record, build, build_started, scans, log_before)
        finally:
            _stop_all([build, *(process for _, process in others)])


def _build_type_current(record: dict[str, Any], other: dict[str, Any], build: Process) -> bool:
    """Whether one of a build-type list's other types, its ninja started as ``build``, has nothing
    to build or install (then its log is written as a build's)."""
    current, _, seen, working = _check_while_building(build, other["install_summary"])
    if working or build.wait() != 0 or not current or regenerated(record, other["build_dir"]):
        return False
    _finish_quietly(build, other["build_dir"], other["build_command"], seen)
    return True


def _check_while_building(build: Process, summary: str) -> tuple[bool, Any, list[bytes], bool]:
    """While ninja checks its own inputs on one core, this one checks the package tree's against
    the install's ``summary``: (current, its scans, ninja's output so far, whether ninja has work)."""
    current, scans = install_summary.check(summary)
    output = build.stdout
    assert output is not None, "spawn.start() gives every child an output pipe"
    seen, working = _read_until_work(output)
    return current, scans, seen, working


def _finish_quietly(build: Process, build_dir: str, command: list[str], seen: list[bytes]) -> None:
    """A build that had nothing to do: its output closed, its log written."""
    output = build.stdout
    assert output is not None, "spawn.start() gives every child an output pipe"
    output.close()
    _write_logs(build_dir, command, seen)


def _stop_all(builds: Iterable[Process]) -> None:
    for build in builds:
        if build.poll() is None:  # an error or a handover before ninja was waited for: don't leave it behind
            build.terminate()
            build.wait()


def _read_until_work(stream: Output) -> tuple[list[bytes], bool]:
    """ninja's output up to its first edge that is not CMake's bookkeeping, and whether
    there was one (False: the output ended first)."""
    seen = []
    for raw in stream:
        seen.append(raw)
        parsed = status(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
        if parsed is not None and not is_bookkeeping(parsed[2]):
            return seen, True
    return seen, False


def _write_logs(build_dir: str, command: list[str], output: list[bytes]) -> None:
    """The build step's log, as :func:`buildkit.builder.build_output.run_step` writes it."""
    logs = state_path(build_dir, LOGS)
    data = b"".join([f"$ {command_line(command)}\n".encode(), *output])
    os.makedirs(logs, exist_ok=True)
    for name in ("build.log", "last.log"):
        with open(os.path.join(logs, name), "wb") as handle:
            handle.write(data)
