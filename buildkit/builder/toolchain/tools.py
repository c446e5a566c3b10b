"""Finding cmake, ninja and the compilers, and remembering which ones a build dir uses.

The system's cmake/ninja win when new enough, else the PyPI packages' binaries.  The
paths are the real executables, not wrappers: a pyenv shim or console script costs a
bash or Python start per call, and ninja runs on every build.

Probing starts the tool, so results are cached in JSON keyed by path, mtime and size
(of the file found and of the binary it leads to): a no-op rebuild starts no probe.
The cache keeps trusting a pyenv shim while neither file changes, even if another
pyenv version is selected; harmless, since a build dir sticks to the tools recorded at
its first configure anyway (mixing two ninja versions on one build dir rebuilds all).
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from packaging.version import Version

from buildkit._util.fileutil import read_json, write_json
from buildkit.builder.build_state import TOOL_PROBES, TOOLCHAIN_RECORD, state_path
from buildkit.errors import ToolchainError

RECORD_FORMAT = 1
PROBE_TIMEOUT_S = 60
KINDS = ("cmake", "ninja", "c", "cxx", "nvcc")
_LABELS = {"cmake": "cmake", "ninja": "ninja", "c": "C compiler", "cxx": "C++ compiler", "nvcc": "nvcc",
           "launcher": "compiler launcher"}
_CMAKE_PROBE_SCRIPT = 'message(STATUS "buildkit-probe|${CMAKE_VERSION}|${CMAKE_COMMAND}")\n'
_NVCC_RELEASE = re.compile(r"release (\d+\.\d+)")
_SAYS_VERSION = re.compile(r"version (\d+(?:\.\d+)+)")
_ANY_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)*")

# Probe subprocesses started by this process: tests assert that a warm cache starts none.
probe_count = 0


@dataclass(frozen=True)
class Tool:
    name: str
    path: Path
    version: str

    def to_record(self) -> dict[str, Any]:
        mtime_ns, size = _stamp(self.path) or (0, 0)
        return {"name": self.name, "path": str(self.path), "version": self.version, "mtime_ns": mtime_ns, "size": size}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Tool:
        return cls(str(data["name"]), Path(data["path"]), str(data["version"]))


@dataclass(frozen=True)
class Compilers:
    c: Tool | None = None
    cxx: Tool | None = None
    nvcc: Tool | None = None


@dataclass(frozen=True)
class Toolchain:
    cmake: Tool
    ninja: Tool | None
    compilers: Compilers = Compilers()

    def tools(self) -> dict[str, Tool | None]:
        c = self.compilers
        return {"cmake": self.cmake, "ninja": self.ninja, "c": c.c, "cxx": c.cxx, "nvcc": c.nvcc}

    def to_record(self) -> dict[str, Any]:
        return {"format": RECORD_FORMAT, **{k: t and t.to_record() for k, t in self.tools().items()}}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Toolchain:
        """Raises ValueError, KeyError or TypeError for a record this version cannot read."""
        if record.get("format") != RECORD_FORMAT:
            raise ValueError(f"unknown toolchain record format {record.get('format')!r}")
        tool = {k: Tool.from_record(record[k]) if record.get(k) else None for k in KINDS}
        if tool["cmake"] is None:
            raise ValueError("no cmake in the toolchain record")
        return cls(tool["cmake"], tool["ninja"], Compilers(tool["c"], tool["cxx"], tool["nvcc"]))


def parse_version(text: str) -> Version | None:
    """The leading numeric part, so cmake "3.31.20241105-g1a2b" and ninja "1.13.2.git" compare."""
    match = re.match(r"\s*(\d+(?:\.\d+)*)", text)
    # packaging.version is only needed when a tool is probed, never on a no-op run.
    from packaging.version import InvalidVersion, Version

    with suppress(InvalidVersion):
        return Version(match[1]) if match else None
    return None


def version_at_least(version: str, minimum: str) -> bool:
    have, need = parse_version(version), parse_version(minimum)
    return have is not None and need is not None and have >= need


def version_from_output(out: str) -> str | None:
    """nvcc "release 13.0"; gcc "cc (Debian 12.2.0-14) 12.2.0"; clang, cmake "version X"; ninja "1.13.2"."""
    first = out.strip().splitlines()[0] if out.strip() else ""
    nvcc, says, numbers = _NVCC_RELEASE.search(out), _SAYS_VERSION.search(first), _ANY_VERSION.findall(first)
    return nvcc[1] if nvcc else says[1] if says else numbers[-1] if numbers else None


# ------------------------------------------------------------------- probing

def _run(argv: list[str]) -> str | None:
    """stdout + stderr of a successful run; None when the program is unusable."""
    global probe_count  # noqa: PLW0603  a module-level counter of started probes, which the tests read
    probe_count += 1
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=PROBE_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout + proc.stderr if proc.returncode == 0 else None


def _probe_cmake(path: Path) -> tuple[str, Path] | None:
    # CMAKE_COMMAND is the real binary however many shims led there: one start gives both.
    with tempfile.TemporaryDirectory(prefix="buildkit-probe-") as tmp:
        script = Path(tmp, "probe.cmake")
        script.write_text(_CMAKE_PROBE_SCRIPT, encoding="utf-8")
        out = _run([str(path), "-P", str(script)])
    match = re.search(r"buildkit-probe\|([^|\n]+)\|([^\n]+)", out or "")
    if match:
        return match[1].strip(), Path(match[2].strip())
    # Something that only answers like --version (a stub, an ancient cmake): take its word.
    version = out and version_from_output(out)
    return (version, path) if version else None


def _version_probe(resolve: bool) -> Callable[[Path], tuple[str, Path] | None]:
    def probe(path: Path) -> tuple[str, Path] | None:
        real = real_program(path).resolve() if resolve else path
        out = _run([str(real), "--version"])
        version = out and version_from_output(out)
        return (version, real) if version else None
    return probe


# Compilers keep the path they were found under: clang, gcc and ccache choose their
# behaviour from argv[0], so following a symlink or wrapper would change what runs.
_PROBES: dict[str, Callable[[Path], tuple[str, Path] | None]] = {
    "cmake": _probe_cmake, "ninja": _version_probe(True), "nvcc": _version_probe(True),
    "c": _version_probe(False), "cxx": _version_probe(False), "launcher": _version_probe(False)}


def _script_text(path: Path) -> str | None:
    """The head of a ``#!`` script; None for a binary or an unreadable file."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    return head.decode("utf-8", "replace") if head.startswith(b"#!") else None


def real_program(path: Path) -> Path:
    """The binary behind a wrapper script when the script says which, else the script.

    A wrapper we cannot see through (a user's own script) is used as it is: it
    works, it only costs a process start per call.
    """
    for _ in range(4):  # wrappers of wrappers, bounded against loops
        text = _script_text(path)
        target = text and (_exec_target(text) or _pyenv_target(text, path.name)
                           or _console_script_target(text, path.name))
        if not target:
            return path
        path = target
    return path


def _exec_target(text: str) -> Path | None:
    # Plain forwarders such as /usr/local/bin/nvcc: `exec /usr/local/cuda-13.0/bin/nvcc "$@"`.
    match = re.search(r'^\s*exec\s+"?(/[^"\s]+)"?\s+"\$@"\s*$', text, re.M)
    return Path(match[1]) if match and os.path.isfile(match[1]) else None


def _pyenv_target(text: str, name: str) -> Path | None:
    match = re.search(r'exec\s+"([^"]+/libexec/pyenv)"\s+exec\s+"\$program"', text)
    out = _run([match[1], "which", name]) if match else None
    # stdout and stderr are joined: the path is the line that names a file.
    target = next((line.strip() for line in (out or "").splitlines() if os.path.isfile(line.strip())), None)
    return Path(target) if target else None


def _console_script_target(text: str, name: str) -> Path | None:
    # Old cmake/ninja wheels installed a Python wrapper; one from this very environment
    # runs the binary of the package we can import.
    same_env = Path(text.splitlines()[0][2:].strip()).parent == Path(sys.executable).parent
    return pypi_binary(name) if same_env and re.search(rf"^from {re.escape(name)} import", text, re.M) else None


def pypi_binary(name: str) -> Path | None:
    """The real binary of the PyPI ``cmake`` or ``ninja`` package, if installed."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    directory = getattr(module, "CMAKE_BIN_DIR" if name == "cmake" else "BIN_DIR", None)
    binary = Path(directory, name + (".exe" if os.name == "nt" else "")) if directory else None
    return binary.resolve() if binary and binary.is_file() and _script_text(binary) is None else None


# --------------------------------------------------------------------- cache

def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def default_cache_path() -> Path:
    return Path.home() / ".cache" / "buildkit" / "toolchain-cache.json"


def cache_path_for(build_dir: Path | str) -> Path:
    return Path(state_path(build_dir, TOOL_PROBES))


def record_path(build_dir: Path | str) -> Path:
    return Path(state_path(build_dir, TOOLCHAIN_RECORD))


class _ProbeCache:
    def __init__(self, path: Path | str | None):
        self.path = Path(path) if path else default_cache_path()
        data = read_json(self.path)
        entries = data.get("entries") if isinstance(data, dict) and data.get("format") == RECORD_FORMAT else None
        self.entries: dict[str, Any] = entries if isinstance(entries, dict) else {}
        self.dirty = False

    def probe(self, kind: str, path: Path) -> Tool | None:
        key = f"{kind}:{path}"
        entry = self.entries.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("real"), str) and isinstance(entry.get("version"), str):
            stamp, real_stamp = _stamp(path), _stamp(Path(entry["real"]))
            if (stamp is not None and real_stamp is not None
                    and [list(stamp), list(real_stamp)] == [entry.get("stamp"), entry.get("real_stamp")]):
                return Tool(_LABELS[kind], Path(entry["real"]), entry["version"])
        result, self.dirty = _PROBES[kind](path), True
        if result is None:
            self.entries.pop(key, None)
            return None
        version, real = result
        self.entries[key] = {"stamp": _stamp(path), "real": str(real), "real_stamp": _stamp(real), "version": version}
        return Tool(_LABELS[kind], real, version)

    def save(self) -> None:
        if self.dirty:
            with suppress(OSError):  # only a speed-up: a read-only home is no error
                write_json(self.path, {"format": RECORD_FORMAT, "entries": self.entries})
            self.dirty = False


def probe_tool(kind: str, path: Path | str, *, cache_path: Path | str | None = None) -> Tool | None:
    """Version and real path of one executable; kind is one of KINDS or "launcher"."""
    cache = _ProbeCache(cache_path)
    try:
        return cache.probe(kind, Path(path).absolute())
    finally:
        cache.save()


# ----------------------------------------------------------------- discovery

def _locate(program: str) -> Path | None:
    """An absolute path for a program name or path, symlinks kept."""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program)
        return path.absolute() if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which(program)
    return Path(found).absolute() if found else None


def _find_build_tool(kind: str, minimum: str, cache_path: Path | str | None, hint: str) -> Tool:
    cache, rejected, seen = _ProbeCache(cache_path), [], set()
    try:
        for candidate in (_locate(kind), pypi_binary(kind)):
            if candidate is None or candidate in seen:
                continue
            seen.add(candidate)
            tool = cache.probe(kind, candidate)
            if tool is not None and version_at_least(tool.version, minimum):
                return tool
            rejected.append(f"{candidate} is version {tool.version}" if tool else f"{candidate} does not run")
    finally:
        cache.save()
    found = f" ({'; '.join(rejected)})" if rejected else ""
    raise ToolchainError(f"No {kind} {minimum} or newer was found{found}.", hint)


def find_cmake(minimum: str = "3.24", *, cache_path: Path | str | None = None) -> Tool:
    """The cmake on PATH when it is at least ``minimum``, else the PyPI package's binary."""
    return _find_build_tool("cmake", minimum, cache_path, (
        f"Run `pip install 'cmake>={minimum}'` in the build environment (buildkit then uses the "
        f"package's binary), or upgrade the cmake on PATH to {minimum} or newer."))


NINJA_MINIMUM = "1.10"


def find_ninja(minimum: str = NINJA_MINIMUM, *, cache_path: Path | str | None = None) -> Tool:
    """The ninja on PATH when it is at least ``minimum``, else the PyPI package's binary.

    A wrapper script on PATH is followed to its binary when the script says which
    (pyenv shims, `exec /path "$@"` forwarders, this environment's console script).
    """
    return _find_build_tool("ninja", minimum, cache_path, (
        f"Run `pip install 'ninja>={minimum}'` in the build environment, upgrade the ninja on PATH, "
        "or set USE_NINJA=0 to build with CMake's default generator."))


def missing_build_tools(cmake_minimum: str, ninja: bool) -> list[str]:
    """The requirements a PEP 517 build environment needs for cmake (and ninja, when the
    build uses it): none when this machine has new-enough ones, found as a build finds
    them.  scikit-build-core and meson-python ask the same way: installing the cmake wheel
    into every isolated build environment cost 2-3 s of a 12 s cold build."""
    needed = []
    for kind, minimum, wanted in (("cmake", cmake_minimum, True), ("ninja", NINJA_MINIMUM, ninja)):
        if not wanted:
            continue
        try:
            _find_build_tool(kind, minimum, None, "")
        except ToolchainError:
            needed.append(f"{kind}>={minimum}")
    return needed


def _find_compiler(cache: _ProbeCache, kind: str, requested: str | None, defaults: tuple[str, ...],
                   variable: str) -> Tool | None:
    if not requested:
        return next((t for t in (_probe_found(cache, kind, name) for name in defaults) if t), None)
    # CC="ccache gcc -m64" style values: CMake runs the first word, and so do we.
    words = shlex.split(requested)
    tool = _probe_found(cache, kind, words[0]) if words else None
    if tool is None:
        raise ToolchainError(f"{variable}={requested!r} does not name a working compiler (not found, "
                             "or it does not answer --version).",
                             f"Set {variable} to a compiler on PATH or an absolute path, or unset it.")
    return tool


def _probe_found(cache: _ProbeCache, kind: str, program: str) -> Tool | None:
    path = _locate(program)
    return cache.probe(kind, path) if path else None


def find_compilers(cuda: bool = False, *, cc: str | None = None, cxx: str | None = None,
                   cudacxx: str | None = None, cache_path: Path | str | None = None) -> Compilers:
    """The compilers CMake would pick (``cc``... are CC/CXX/CUDACXX values); None where none."""
    cache = _ProbeCache(cache_path)
    try:
        return Compilers(
            c=_find_compiler(cache, "c", cc, ("cc", "gcc", "clang"), "CC"),
            cxx=_find_compiler(cache, "cxx", cxx, ("c++", "g++", "clang++"), "CXX"),
            nvcc=_find_compiler(cache, "nvcc", cudacxx, ("nvcc", "/usr/local/cuda/bin/nvcc"), "CUDACXX")
            if cuda or cudacxx else None)
    finally:
        cache.save()




# ---------------------------------------------------- the build dir's record

def record(build_dir: Path | str, toolchain: Toolchain) -> None:
    """Remember the tools a build directory is configured with."""
    write_json(record_path(build_dir), toolchain.to_record())


def load_recorded(build_dir: Path | str) -> Toolchain | None:
    """The recorded toolchain; None when there is none or it is unreadable (reconfigure)."""
    data = read_json(record_path(build_dir))
    with suppress(KeyError, TypeError, ValueError, AttributeError):
        return Toolchain.from_record(data)
    return None


def check_record(record: Mapping[str, Any], *, cache_path: Path | str | None = None) -> list[str]:
    """Why the recorded tools can't be trusted any more; empty when all are unchanged.

    Files with the recorded mtime and size are not started: a no-op rebuild costs stats.
    """
    try:
        Toolchain.from_record(record)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [f"the recorded toolchain cannot be read ({exc})"]
    cache = _ProbeCache(cache_path)
    try:
        reasons = [_tool_change(cache, kind, record[kind]) for kind in KINDS if record.get(kind)]
    finally:
        cache.save()
    return [reason for reason in reasons if reason]


def _tool_change(cache: _ProbeCache, kind: str, entry: Mapping[str, Any]) -> str | None:
    path, old = Path(entry["path"]), str(entry["version"])
    label, stamp = f"{_LABELS[kind]} {path}", _stamp(path)
    if stamp is None:
        return f"{label} (version {old}) recorded at configure is gone"
    if list(stamp) == [entry.get("mtime_ns"), entry.get("size")]:
        return None
    tool = cache.probe(kind, path)
    if tool is None:
        return f"{label} changed and no longer runs"
    if tool.version != old:
        return f"{label} changed from version {old} to {tool.version}"
    return f"{label} was replaced (same version {old}, different size or modification time)"
