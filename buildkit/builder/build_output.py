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
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from buildkit._util import console
from buildkit._util.fileutil import write_atomic
from buildkit.errors import BuildFailedError

NINJA_STATUS = re.compile(r"^\[(\d+)/(\d+)\]")
NO_WORK = "ninja: no work to do."
# Edges of CMake's own bookkeeping: the CONFIGURE_DEPENDS glob check runs on every ninja
# run; when it finds a change, the "Re-running CMake..." edge that follows is real work.
BOOKKEEPING_EDGES = frozenset({"Re-checking globbed directories..."})
_VERIFY_GLOBS_COMMAND = re.compile(r"cmake(?:\.exe)?\s+-P\s+\S*VerifyGlobs\.cmake\s*$")  # `ninja -v` shows the command


def is_bookkeeping(edge: str) -> bool:
    return edge in BOOKKEEPING_EDGES or bool(_VERIFY_GLOBS_COMMAND.search(edge))
LABELS = {"configure": "Configuring", "build": "Compiling", "install": "Installing"}


@dataclass
class StepResult:
    phase: str
    returncode: int
    seconds: float
    log_path: Path
    started: float = 0.0  # time.time() at the start
    steps: int = 0  # Ninja edges run ([n/N] lines), CMake's bookkeeping edges left out
    no_work: bool = False  # Ninja said "no work to do"


@dataclass(frozen=True)
class ErrorSite:
    """The first real error of a failed step."""

    kind: str  # compiler, nvcc, linker, cmake, other
    message: str
    file: str | None = None
    line: int | None = None
    context: tuple[str, ...] = field(default_factory=tuple)


# ------------------------------------------------------------ error patterns

_COMPILER = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:\d+:)?\s+"
                       r"(?:fatal |internal compiler )?error:\s*(?P<msg>.*)$")
# nvcc's EDG front end (and MSVC) write `file(line): error: ...`.
_PAREN = re.compile(r"^(?P<file>\S.*?)\((?P<line>\d+)(?:,\d+)?\):\s+(?:fatal |catastrophic )?"
                    r"error(?: \w+)?\s*:\s*(?P<msg>.*)$")
_NVCC = re.compile(r"^(?:nvcc|ptxas|nvlink|fatbinary) (?:fatal|error)\s*:\s*(?P<msg>.*)$")
_LINKER = re.compile(r"undefined reference to|multiple definition of|\bld(?:\.\w+)?: (?:error|cannot find|fatal)"
                     r"|ld: library not found|Undefined symbols for architecture")
_CMAKE = re.compile(r"^CMake Error(?: at (?P<file>.+?):(?P<line>\d+))?")
_GENERIC = re.compile(r"^[\w.+-]+: (?:fatal )?error: ")
_PRELUDE = re.compile(r"(^In file included from|^\s+from |: In (?:member )?function|: in function|"
                      r": In instantiation of|^In function)")
_NOISE = re.compile(r"^(\[\d+/\d+\]|FAILED: |ninja: )")


def find_first_error(lines: Sequence[str]) -> ErrorSite | None:
    """The first line that is a real error, with its location and a few lines of context."""
    for index, text in enumerate(lines):
        site = _match_error(text)
        if site is not None:
            before = _prelude(lines, index)
            after = _cmake_context(lines, index) if site.kind == "cmake" else _context(lines, index)
            return ErrorSite(site.kind, site.message, site.file, site.line, (*before, text, *after))
    return None


def _match_error(text: str) -> ErrorSite | None:
    if m := _COMPILER.match(text):
        return ErrorSite("compiler", m["msg"], m["file"], int(m["line"]))
    if m := _PAREN.match(text):
        kind = "nvcc" if m["file"].endswith((".cu", ".cuh")) else "compiler"
        return ErrorSite(kind, m["msg"], m["file"], int(m["line"]))
    if m := _NVCC.match(text):
        return ErrorSite("nvcc", m["msg"])
    if _LINKER.search(text):
        return ErrorSite("linker", text.strip())
    if m := _CMAKE.match(text):
        return ErrorSite("cmake", text.strip(), m["file"], int(m["line"]) if m["line"] else None)
    if _GENERIC.match(text):
        return ErrorSite("other", text.strip())
    return None


def _prelude(lines: Sequence[str], index: int) -> list[str]:
    # gcc's "In file included from" chain and "In function" line say where the error
    # really comes from, so they go with it.
    start = index
    while start > 0 and index - start < 6 and _PRELUDE.search(lines[start - 1]):
        start -= 1
    return list(lines[start:index])


def _context(lines: Sequence[str], index: int, limit: int = 5) -> list[str]:
    """The source excerpt and notes after a compiler error, up to the next build noise."""
    out: list[str] = []
    for text in lines[index + 1:index + 1 + limit]:
        if _NOISE.match(text) or _match_error(text) is not None:
            break
        out.append(text)
    return out


def _cmake_context(lines: Sequence[str], index: int, limit: int = 10) -> list[str]:
    """CMake indents the message of an error; it ends at the first unindented line."""
    out: list[str] = []
    for text in lines[index + 1:index + 1 + limit]:
        if text and not text[0].isspace():
            break
        out.append(text)
    while out and not out[-1].strip():
        out.pop()
    return out


def failing_command(lines: Sequence[str]) -> tuple[str | None, str | None]:
    """(target, command) from Ninja's ``FAILED:`` line and the command line after it."""
    for index, text in enumerate(lines):
        if text.startswith("FAILED: "):
            target = re.sub(r"^\[code=-?\d+\]\s*", "", text[len("FAILED: "):]).strip()
            command = lines[index + 1].strip() if index + 1 < len(lines) else None
            if command and (_match_error(command) or _NOISE.match(command)):
                command = None
            return target or None, command
    return None, None


# ------------------------------------------------------------------- hints

_KILLED = re.compile(r"\bKilled\b|signal 9\b|SIGKILL")
_MISSING_HEADER = re.compile(r"fatal error: (?:'(?P<clang>[^']+)' file not found|(?P<gcc>[^:\s]+): No such file)"
                             r"|cannot open source file \"(?P<nvcc>[^\"]+)\"")
# Headers whose providing package people most often lack; the hint names it.
HEADER_PACKAGES = {
    "Python.h": "the Python development headers (python3-dev on Debian/Ubuntu, python3-devel on Fedora; "
                "python.org, conda and uv Pythons include them)",
    "cuda_runtime.h": "the CUDA toolkit (set CUDA_HOME or put nvcc on PATH)",
    "cuda.h": "the CUDA toolkit (set CUDA_HOME or put nvcc on PATH)",
    "cuda_runtime_api.h": "the CUDA toolkit (set CUDA_HOME or put nvcc on PATH)",
    "cublas_v2.h": "the CUDA toolkit's cuBLAS (libcublas-dev)",
    "cudnn.h": "cuDNN (the nvidia-cudnn package or libcudnn-dev)",
    "nccl.h": "NCCL (libnccl-dev or the nvidia-nccl package)",
    "omp.h": "OpenMP (libgomp ships with GCC; libomp-dev for clang; `brew install libomp` on macOS)",
    "cblas.h": "a CBLAS implementation (libopenblas-dev)",
    "lapacke.h": "LAPACKE (liblapacke-dev)",
    "mkl.h": "Intel MKL (the mkl-devel package)",
    "zlib.h": "zlib (zlib1g-dev on Debian/Ubuntu, zlib-devel on Fedora)",
    "ffi.h": "libffi (libffi-dev)",
    "openssl/ssl.h": "OpenSSL (libssl-dev)",
    "numpy/arrayobject.h": "NumPy (install numpy in the build environment)",
    "pybind11/pybind11.h": "pybind11 (pip install pybind11, or add it to CMAKE_PREFIX_PATH)",
}


# CMake's report of variables that are NOTFOUND, at generate time: the header line,
# one unindented line per variable (an include folder made absolute: /src/NAME), and
# indented lines saying where each is used.
NOTFOUND_REPORT = "CMake Error: The following variables are used in this project, but they are set to NOTFOUND."
# find_package(Torch) without torch: CMake's own message (wrapped anywhere) or BuildkitTorch.cmake's.
_TORCH_MISSING = re.compile(r'provided\s+by\s+"Torch"|buildkit: PyTorch was not found')
TORCH_MISSING_HINT = (
    "PyTorch is not installed where the build runs, so find_package(Torch) found no TorchConfig.cmake. "
    "Install the torch your extension will run with into that environment and build without isolation "
    "(`pip install torch==<version>`, then `pip install --no-build-isolation .` or `buildkit develop`), "
    "or pass its CMake folder with -DTorch_DIR=<site-packages>/torch/share/cmake/Torch.")


def notfound_variables(lines: Sequence[str]) -> list[tuple[str, str]]:
    """(variable, where it is used) for each variable in CMake's NOTFOUND report."""
    try:
        start = lines.index(NOTFOUND_REPORT) + 2  # the "Please set them ..." line follows
    except ValueError:
        return []
    found: list[tuple[str, str]] = []
    for text in lines[start:]:
        if not text.strip() or text.startswith("-- "):
            break
        if text[0].isspace():
            if found and not found[-1][1]:
                found[-1] = (found[-1][0], " ".join(text.split()))
        else:
            found.append((text.strip().rsplit("/", 1)[-1], ""))
    return found


def hint_for(lines: Sequence[str], returncode: int | None, jobs: int | None) -> str | None:
    """A hint when the cause of the failure is one we recognize."""
    if returncode in (137, -9) or any(_KILLED.search(text) for text in lines):
        return _oom_hint(jobs)
    if _TORCH_MISSING.search("\n".join(lines)):
        return TORCH_MISSING_HINT
    for text in lines:
        if m := _MISSING_HEADER.search(text):
            return missing_header_hint(m["clang"] or m["gcc"] or m["nvcc"])
    if names := notfound_variables(lines):
        return (f"{', '.join(name for name, _ in names)}: each is what a find_library, find_path or find_program "
                "call found, and it found nothing. Install what provides it, or give its location with "
                f"-D{names[0][0]}=<path> (in CMAKE_ARGS, or cmake-defines in [tool.buildkit]).")
    return None


def _oom_hint(jobs: int | None) -> str:
    lower = f"e.g. MAX_JOBS={max(1, jobs // 2)}" if jobs else "e.g. MAX_JOBS=2"
    running = f"with MAX_JOBS={jobs} parallel jobs" if jobs else "with too many parallel jobs"
    return (f"A compiler was killed (signal 9), which almost always means the machine ran out of memory "
            f"{running}. Lower MAX_JOBS ({lower}) and build again.")


def missing_header_hint(header: str) -> str:
    package = HEADER_PACKAGES.get(header) or HEADER_PACKAGES.get(Path(header).name)
    if package:
        return f"{header} is missing: install {package}, then build again."
    return (f"{header} is missing: install the package that provides it, or fix the include path "
            "(target_include_directories, or CMAKE_PREFIX_PATH for a dependency found with find_package).")


def failure_error(phase: str, command: Sequence[str], lines: Sequence[str], returncode: int,
                  log_path: Path, jobs: int | None = None) -> BuildFailedError:
    """The user-facing error for a failed step: first error, failing command, hint, log."""
    site = find_first_error(lines)
    label = LABELS.get(phase, phase.capitalize())
    if site and site.file:
        where = f"{site.file}:{site.line}" if site.line else site.file
        parts = [f"{label} failed at {where}:", *_indent(site.context)]
    elif site:
        parts = [f"{label} failed:", *_indent(site.context)]
    else:
        tail = [text for text in lines if text.strip()][-15:]
        parts = [f"{label} failed (exit code {returncode}) without a recognizable error; the last lines were:",
                 *_indent(tail)]
    if names := notfound_variables(lines):
        parts += ["", "Set to NOTFOUND:", *_indent([f"{name} ({use})" if use else name for name, use in names])]
    target, failed = failing_command(lines)
    if failed:
        parts += ["", f"Failing command (building {target}):" if target else "Failing command:",
                  *_indent([_shorten(failed)])]
    else:
        parts += ["", "Command:", *_indent([_shorten(shlex.join(command))])]
    return BuildFailedError("\n".join(parts), hint_for(lines, returncode, jobs), log_path=str(log_path),
                            returncode=returncode, command=list(command))


def _indent(lines: Sequence[str]) -> list[str]:
    return ["  " + text for text in lines]


def _shorten(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + " ..."


# ----------------------------------------------------------------- display

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
        self.progress = None
        self.task = None

    def start(self) -> None:
        if self.phase != "build":
            self._open(total=None)

    def _open(self, total: int | None) -> None:
        # rich costs ~20 ms to import: only a terminal that shows progress pays for it.
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        counted = (BarColumn(bar_width=30), MofNCompleteColumn()) if total else ()
        self.progress = Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), *counted,
                                 TimeElapsedColumn(), TextColumn("{task.fields[last]}", markup=False),
                                 console=console.console(), transient=True)
        self.task = self.progress.add_task(LABELS.get(self.phase, self.phase), total=total, last="")
        self.progress.start()

    def line(self, text: str, done: int | None, total: int | None) -> None:
        if self.progress is None and total:
            self._open(total)
        if self.progress is None:
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
    return build_dir / ".buildkit" / "logs"


def run_step(phase: str, command: Sequence[str], *, build_dir: Path, verbose: bool = False,
             jobs: int | None = None, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> StepResult:
    """Run one step, logging everything; raise BuildFailedError with the first error on failure.

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
            log.write(f"$ {shlex.join(command)}\n".encode())
            result.returncode = _pump(command, cwd, env, log, display, result)
    finally:
        display.stop()
    if result.returncode == 0:
        display.succeeded()
    result.seconds = time.perf_counter() - started
    shutil.copyfile(log_path, logs / "last.log")
    if result.returncode != 0:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[1:]
        raise failure_error(phase, command, lines, result.returncode, log_path, jobs)
    return result


def _pump(command: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None, log, display: _Display,
          result: StepResult) -> int:
    try:
        proc = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise BuildFailedError(f"Could not start {command[0]}: {exc}.",
                               "The tool recorded for this build folder is gone; run again with CMAKE_FRESH=1.",
                               command=list(command)) from None
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            log.write(raw)
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            done = total = None
            if m := NINJA_STATUS.match(text):
                done, total = int(m[1]), int(m[2])
                if not is_bookkeeping(text[m.end():].strip()):
                    result.steps += 1
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
    except OSError:
        return None


def print_summary(timings: Sequence[tuple[str, float]], targets: int) -> None:
    """One line at the end of a successful run: time per phase and targets built."""
    total = sum(seconds for _, seconds in timings)
    if not targets and all(phase == "build" for phase, _ in timings):
        console.info(f"up to date ({total:.2f} s)")
        return
    parts = [f"{phase} {seconds:.2f} s" + (f" ({targets} targets)" if phase == "build" else "")
             for phase, seconds in timings]
    console.info(f"done in {total:.2f} s: " + ", ".join(parts))
