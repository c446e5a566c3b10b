"""The first real error of a failed build step, and what to do about it.

Read only when a step failed (:func:`buildkit.builder.build_output.run_step` imports
this module then): the patterns of compilers, nvcc, linkers and CMake, the error's
context, and hints for causes seen often (the OOM killer, a missing header, a package
CMake could not find).  A parallel build's last lines are usually the tail of some
unrelated job, so the *first* error is pulled out of the log.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from buildkit.errors import BuildFailedError

LABELS = {"configure": "Configuring", "build": "Compiling", "install": "Installing"}


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
_CUDA_TOOLKIT = ("the CUDA toolkit (set CUDA_HOME or put nvcc on PATH; or NVIDIA's toolchain wheels with "
                 "cuda-toolkit = \"wheel\")")


def _nvidia_library(name: str, wheel: str, debian: str) -> str:
    return (f"{name}: NVIDIA's {wheel} wheel (add {{ distribution = \"{wheel}\" }} to library-dependencies: "
            f"buildkit gives the build its headers), or the CUDA toolkit's (NVIDIA's apt package {debian}-<version>, "
            "as libcublas-dev-13-0)")


HEADER_PACKAGES = {
    "Python.h": "the Python development headers (python3-dev on Debian/Ubuntu, python3-devel on Fedora; "
                "python.org, conda and uv Pythons include them)",
    "cuda_runtime.h": _CUDA_TOOLKIT,
    "cuda.h": _CUDA_TOOLKIT,
    "cuda_runtime_api.h": _CUDA_TOOLKIT,
    "crt/host_config.h": "nvcc's compiler headers (the nvidia-cuda-crt wheel of nvcc's release, or the CUDA toolkit)",
    "cublas_v2.h": _nvidia_library("cuBLAS", "nvidia-cublas", "libcublas-dev"),
    "cublasLt.h": _nvidia_library("cuBLASLt", "nvidia-cublas", "libcublas-dev"),
    "cusparse.h": _nvidia_library("cuSPARSE", "nvidia-cusparse", "libcusparse-dev"),
    "curand.h": _nvidia_library("cuRAND", "nvidia-curand", "libcurand-dev"),
    "cufft.h": _nvidia_library("cuFFT", "nvidia-cufft", "libcufft-dev"),
    "cusolverDn.h": _nvidia_library("cuSOLVER", "nvidia-cusolver", "libcusolver-dev"),
    "nvrtc.h": _nvidia_library("NVRTC", "nvidia-cuda-nvrtc", "cuda-nvrtc-dev"),
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


# ninja cannot read the build files CMake generated, or CMake its install script: damaged
# beyond what buildkit's look at their first line sees.
_DAMAGED_GENERATED = re.compile(r"ninja: error: (?:loading '?build\.ninja|[\w/.-]*(?:build|rules)\.ninja:\d+:)"
                                r"|cmake_install\.cmake:\d+:?\s*$|Parse error\.\s+Expected a command name")


def hint_for(lines: Sequence[str], returncode: int | None, jobs: int | None) -> str | None:
    """A hint when the cause of the failure is one we recognize."""
    if returncode in (137, -9) or any(_KILLED.search(text) for text in lines):
        return _oom_hint(jobs)
    if any(_DAMAGED_GENERATED.search(text) for text in lines):
        return ("A file CMake generated in the build folder (build.ninja, rules.ninja or cmake_install.cmake) "
                "cannot be read: it was damaged. Run the command again with CMAKE_FRESH=1, which configures "
                "from scratch and writes those files anew.")
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


# Header folders of NVIDIA's CCCL (Thrust, CUB, libcu++), a wheel of its own since CUDA 13.
HEADER_FOLDER_PACKAGES = {
    folder: "CCCL (Thrust, CUB, libcu++: the nvidia-cuda-cccl wheel of nvcc's CUDA major, or the CUDA toolkit)"
    for folder in ("thrust/", "cub/", "cuda/", "nv/")}


def missing_header_hint(header: str) -> str:
    package = (HEADER_PACKAGES.get(header) or HEADER_PACKAGES.get(Path(header).name)
               or next((text for folder, text in HEADER_FOLDER_PACKAGES.items() if header.startswith(folder)), None))
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
    first_error = "\n".join(parts)
    target, failed = failing_command(lines)
    if failed:
        parts += ["", f"Failing command (building {target}):" if target else "Failing command:",
                  *_indent([_shorten(failed)])]
    else:
        parts += ["", "Command:", *_indent([_shorten(shlex.join(command))])]
    return BuildFailedError("\n".join(parts), hint_for(lines, returncode, jobs), log_path=str(log_path),
                            returncode=returncode, command=list(command), first_error=first_error)


def _indent(lines: Sequence[str]) -> list[str]:
    return ["  " + text for text in lines]


def _shorten(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + " ..."


# ----------------------------------------------------------------- display
