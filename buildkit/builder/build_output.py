"""Running one build step (configure, build, install) and making its output useful.

Every step's full output goes to ``<build_dir>/.buildkit/logs/<phase>.log`` (and a
copy in ``last.log``).  The terminal gets a rich progress display, plain progress
lines without a terminal (CI), or everything with ``verbose``.  When a step fails,
the *first* real error is pulled out of the log (not the last lines, which after a
parallel build are usually the tail of some unrelated job) and raised as a
:class:`~buildkit.errors.BuildFailedError` with the failing command and, where the
cause is known, a hint.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from buildkit._util import console
from buildkit._util.fileutil import write_atomic
from buildkit.builder.build_state import LOGS, state_path
from buildkit.builder.ninja_status import NO_WORK, command_line, is_bookkeeping, status
from buildkit.errors import BuildFailedError

if TYPE_CHECKING:
    from typing import BinaryIO

    from rich.progress import Progress, TaskID

    from buildkit._util.spawn import Process


@dataclass
class StepResult:
    phase: str
    returncode: int
    seconds: float
    log_path: Path
    started: float = 0.0  # time.time() at the start
    steps: int = 0  # Ninja edges run ([n/N] lines), CMake's bookkeeping edges left out
    no_work: bool = False  # Ninja said "no work to do"
    edges: list[str] = field(default_factory=list)  # those edges' descriptions


class _Display:
    """Plain mode (no terminal, CI): an "installing" line, and for compiles a line every ~10%."""

    def __init__(self, phase: str):
        self.phase = phase
        self.next_percent = 10
        self.total = 0  # the last [n/N] total seen
        self.shown = 0  # the last count printed

    def start(self) -> None:
        # The driver announces a configure with its reasons, and a no-op build stays silent.
        if self.phase == "install":
            console.info("installing...")

    def line(self, text: str, done: int | None, total: int | None) -> None:
        if done is None or not total:
            return
        self.total = total
        percent = done * 100 // total
        if percent >= self.next_percent or done == total:
            console.info(f"compiling: {percent:3d}% ({done}/{total})")
            self.next_percent = (percent // 10 + 1) * 10
            self.shown = done

    def succeeded(self) -> None:
        """The step exited 0, so every edge ran: say 100% even when ninja's last status
        line counted finished edges before the last one (``[2/3]``) or a CMake
        re-run restarted its count."""
        if self.total and self.shown != self.total:
            console.info(f"compiling: 100% ({self.total}/{self.total})")

    def stop(self) -> None:
        pass


class _Verbose(_Display):
    def line(self, text: str, done: int | None, total: int | None) -> None:
        console.console().print(text, markup=False, highlight=False, soft_wrap=True)


class _Rich(_Display):
    """A transient rich progress bar; for compiles it starts at the first [n/N] line."""

    def __init__(self, phase: str):
        super().__init__(phase)
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def start(self) -> None:
        if self.phase != "build":
            self._open(total=None)

    def _open(self, total: int | None) -> None:
        # rich costs ~20 ms to import: only a terminal that shows progress pays for it.
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        from buildkit.builder.build_errors import LABELS  # beside rich: the terminal's display only

        counted = (BarColumn(bar_width=30), MofNCompleteColumn()) if total else ()
        self.progress = progress = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), *counted,
                                            TimeElapsedColumn(), TextColumn("{task.fields[last]}", markup=False),
                                            console=console.console(), transient=True)
        self.task = progress.add_task(LABELS.get(self.phase, self.phase), total=total, last="")
        progress.start()

    def line(self, text: str, done: int | None, total: int | None) -> None:
        if self.progress is None and total:
            self._open(total)
        if self.progress is None or self.task is None:  # _open() sets both
            return
        if done is not None:  # "[3/40] Building CXX object path/to/file.o": show the file
            self.progress.update(self.task, completed=done, total=total, last=text.rsplit(" ", 1)[-1][-50:])
        elif text.startswith("-- "):
            self.progress.update(self.task, last=text[3:53])

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _display(phase: str, verbose: bool) -> _Display:
    if verbose:
        return _Verbose(phase)
    return _Rich(phase) if console.is_interactive() else _Display(phase)


# -------------------------------------------------------------------- runner

def log_dir(build_dir: Path) -> Path:
    return Path(state_path(build_dir, LOGS))


def run_step(phase: str, command: Sequence[str], *, build_dir: Path, verbose: bool = False,
             jobs: int | None = None, cwd: Path | None = None, env: Mapping[str, str] | None = None,
             process: Process | None = None) -> StepResult:
    """Run one step, logging everything; raise BuildFailedError with the first error on failure.
    ``process``: ``command`` already started (:func:`buildkit._util.spawn.start`), its
    output not read yet.

    The environment is passed through unchanged (``env`` None): the options were read
    from it already, and the tools (CMake, compilers) read their own variables from it.
    """
    logs = log_dir(build_dir)
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{phase}.log"
    display = _display(phase, verbose)
    result = StepResult(phase, 0, 0.0, log_path, started=time.time())
    started = time.perf_counter()
    display.start()
    try:
        with open(log_path, "wb") as log:
            log.write(f"$ {command_line(list(command))}\n".encode())
            result.returncode = _pump(process or _start(command, cwd, env), log, display, result)
    finally:
        display.stop()
    if result.returncode == 0:
        display.succeeded()
    result.seconds = time.perf_counter() - started
    shutil.copyfile(log_path, logs / "last.log")
    if result.returncode != 0:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
        # Start-up cost: the error patterns and hints are read only when a step failed
        # (their module's import is a third of this one's, measured with -X importtime).
        from buildkit.builder.build_errors import failure_error

        raise failure_error(phase, command, lines, result.returncode, log_path, jobs)
    return result


def _start(command: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(list(command), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise BuildFailedError(f"Could not start {command[0]}: {exc}.",
                               "The tool recorded for this build folder is gone; run again with CMAKE_FRESH=1.",
                               command=list(command)) from None


def _pump(proc: Process, log: BinaryIO, display: _Display, result: StepResult) -> int:
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            log.write(raw)
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            done = total = None
            if parsed := status(text):
                done, total, edge = parsed
                if not is_bookkeeping(edge):
                    result.steps += 1
                    result.edges.append(edge)
            elif text == NO_WORK:
                result.no_work = True
            display.line(text, done, total)
        return proc.wait()
    finally:
        if proc.poll() is None:  # interrupted: don't leave a compiler running behind us
            proc.terminate()
            proc.wait()


def copy_if_changed(source: Path, target: Path, stamp_path: Path) -> bool:
    """Copy ``source`` over ``target`` only when the content differs, so the target's
    mtime (watched by IDEs and clangd) moves only on real changes.

    ``stamp_path`` remembers both files' stat when they last matched, so an unchanged
    pair costs two stat calls instead of reading both files.
    """
    stamp = [_stat_key(source), _stat_key(target)]
    if stamp[0] is None or _read_text(stamp_path) == json.dumps(stamp):
        return False
    data = source.read_bytes()
    changed = not target.is_file() or target.read_bytes() != data
    if changed:
        write_atomic(target, data)
    stamp_path.parent.mkdir(parents=True, exist_ok=True)
    stamp_path.write_text(json.dumps([_stat_key(source), _stat_key(target)]), encoding="utf-8")
    return changed


def _stat_key(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # unreadable: as if missing
        return None


class _HeldLine:
    """The result line of a command that prints it at its end (:func:`one_result_line`): the
    phases so far, and how many targets its builds built; None outside such a command."""

    phases: list[tuple[str, float]] | None = None
    targets = 0


def print_summary(timings: Sequence[tuple[str, float]], targets: int, build_type: str | None = None) -> None:
    """One line at the end of a successful run: time per phase and targets built; ``build_type``:
    the type of a build-type list's other build it sums up (its own time).  The command's line
    says its whole wall time; inside :func:`one_result_line` it waits for the command's end."""
    if build_type is None and _HeldLine.phases is not None:
        _HeldLine.phases += timings
        _HeldLine.targets += targets
        return
    _print_line(timings, targets, sum(seconds for _, seconds in timings) if build_type else None, build_type)


def _print_line(timings: Sequence[tuple[str, float]], targets: int, total: float | None = None,
                build_type: str | None = None) -> None:
    """``total``: a build type's own time; None: the command's (its wall time from its start)."""
    if not targets and all(phase == "build" for phase, _ in timings):
        console.up_to_date()  # nothing built, installed, configured or run
        return
    parts = [f"{phase} {seconds:.2f} s" + (f" ({targets} targets)" if phase == "build" and targets else
                                           " (nothing to rebuild)" if phase == "build" else "")
             for phase, seconds in timings]
    seconds = console.command_seconds() if total is None else total
    console.info(f"done in {seconds:.2f} s{f' ({build_type} build)' if build_type else ''}: " + ", ".join(parts))


@contextmanager
def one_result_line() -> Iterator[None]:
    """A command (``buildkit develop``/``build``) whose builds and setup.py runs make one result
    line, printed when it ends well: its builds' phases, its setup.py runs', its whole time."""
    if _HeldLine.phases is not None:  # inside another such command (its setup.py's): that one prints it
        yield
        return
    _HeldLine.phases, _HeldLine.targets = [], 0
    try:
        yield
        if _HeldLine.phases:  # nothing at all: a configure-only run (CMAKE_ONLY) said so itself
            _print_line(_HeldLine.phases, _HeldLine.targets)
    finally:
        _HeldLine.phases = None


@contextmanager
def setup_py_phase(name: str = "setup.py") -> Iterator[None]:
    """A run of the project's setup.py inside :func:`one_result_line`: a phase of its own, less the
    builds it ran (BuildExtension's), which count as theirs."""
    held = _HeldLine.phases
    if held is None:
        yield
        return
    index, started = len(held), time.perf_counter()
    yield
    nested = sum(seconds for _, seconds in held[index:])
    held.insert(index, (name, time.perf_counter() - started - nested))
