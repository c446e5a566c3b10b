"""Test setup: import tensorlet from the source tree, built in place through
buildkit (`buildkit develop examples/tensorlet`, or `python setup.py develop` in
examples/tensorlet). Tests that need the native build skip with the reason when
`tensorlet._C` can't be imported; the codegen tests always run.

`full_build` (session scope) is the one other build of tensorlet a test run
makes, in a copy of the sources at the same git commit. It first builds the CPU
wheel with the README's default options and SOURCE_DATE_EPOCH (test_reproducible.py
compares it byte for byte with the in-place build's), then turns every optional
part on (CUDA for one architecture, BLAS, the profiler, the functional component)
in the same folder, which compiles only what those parts add;
test_components.py, test_cuda.py and test_wheels.py test that build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# buildkit's test helpers (these tests run inside buildkit's repository).
sys.path.insert(0, str(ROOT.parents[1] / "tests"))
from buildkit_testing import overlay_venv  # noqa: E402  (the full build's pip-less overlay venv)

try:
    import tensorlet as tl  # noqa: F401
    IMPORT_ERROR = None
except ImportError as e:  # not built yet
    tl = None
    IMPORT_ERROR = str(e)

if tl is None and os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
    # In CI the README's first command builds tensorlet before the tests: a missing
    # build there is a failure, not 386 quiet skips.
    raise RuntimeError(f"tensorlet is not built ({IMPORT_ERROR}); run `buildkit develop examples/tensorlet` first")

requires_build = pytest.mark.skipif(
    tl is None, reason=f"tensorlet._C is not built ({IMPORT_ERROR}); run `buildkit develop examples/tensorlet` first")


def have_tool(name: str) -> bool:
    return shutil.which(name) is not None or (Path(sys.executable).parent / name).exists()


def tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name) or name


def nvcc_path() -> str | None:
    for candidate in (os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if result.returncode != 0:
        raise AssertionError(f"command failed: {' '.join(map(str, cmd))}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def compile_extension(source: Path, out: Path) -> Path:
    """Builds a C++ extension library against the installed tensorlet headers and libtensorlet."""
    import tensorlet.utils
    cxx = os.environ.get("CXX", "g++")
    run([cxx, "-std=c++20", "-O1", "-shared", "-fPIC", source, "-I", tensorlet.utils.include_path,
         "-I", Path(tensorlet.utils.include_path) / "tensorlet", "-L", tensorlet.utils.library_path, "-ltensorlet",
         f"-Wl,-rpath,{tensorlet.utils.library_path}", "-o", out])
    return out


# ---- the feature-complete build (session scope) ---------------------------------------
# Besides the in-place CPU build the tests import, a test run builds tensorlet once
# more, through buildkit: first with the default options, then with everything
# optional on. Only this fixture builds it.
FULL_BUILD_OPTIONS = {"USE_CUDA": "ON", "TENSORLET_CUDA_ARCH_LIST": "8.0", "USE_BLAS": "ON", "USE_TLPROF": "ON",
                      "BUILD_FUNCTIONAL": "ON"}
# The reproducibility builds' timestamp (2023-11-14).
SOURCE_DATE_EPOCH = "1700000000"
# Variables that would steer a build: the full build sets its own, nothing leaks in.
_STEERING = ("BUILD_", "USE_", "CMAKE_", "TENSORLET_", "MAX_JOBS", "DEBUG", "REL_WITH_DEB_INFO", "VERBOSE", "PIP_",
             "BUILDKIT_", "VIRTUAL_ENV", "PYTHONPATH", "SOURCE_DATE_EPOCH")
_STEERING_NAMES = {"CC", "CXX", "CUDACXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CUDAFLAGS"}
# Cache entries that decide what the CPU wheel holds: the in-place build and the copy's
# first phase must agree on them before their wheels can be compared.
WHEEL_DEFINING_ENTRIES = ("CMAKE_BUILD_TYPE", "BUILDKIT_WHEEL_MODE", "USE_OPENMP", "USE_BLAS", "USE_CUDA", "USE_TLPROF",
                          "BUILD_FUNCTIONAL", "TENSORLET_CPU_VARIANTS")


def steering_free_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_STEERING) and k not in _STEERING_NAMES}
    env.update(overrides)
    return env


def copy_sources(target: Path) -> Path:
    """tensorlet's sources, without what CMake and buildkit put into the tree (like
    buildkit's tests' copy_example). Copies keep mtimes: a kept copy rebuilds incrementally."""
    package = ROOT / "tensorlet"
    outputs = {package / "lib", package / "include", package / "share", package / "_codegen",
               package / "_build_config.py", package / "version.py", ROOT / "build", ROOT / "dist",
               ROOT / "compile_commands.json"}

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if Path(folder, n) in outputs or n in {"__pycache__", ".pytest_cache", ".buildkit"}
                or n.endswith((".so", ".egg-info"))]

    shutil.copytree(ROOT, target, ignore=ignore, dirs_exist_ok=True)
    return target


def git_head(folder: Path) -> str | None:
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD"], cwd=folder, capture_output=True,
                          text=True) if shutil.which("git") else None
    return done.stdout.strip() if done and done.returncode == 0 else None


def copy_at_same_commit(base: Path) -> Path:
    """tensorlet's sources under base/repo/examples/tensorlet. In a git checkout base/repo
    is a shared clone without a checkout whose HEAD is this checkout's: `git rev-parse
    HEAD` (the version label, tensorlet-config's sha) answers the same in both folders,
    as in two CI jobs that clone one commit."""
    repo = base / "repo"
    if sha := git_head(ROOT):
        if not (repo / ".git").is_dir():
            run(["git", "clone", "--quiet", "--shared", "--no-checkout", ROOT.parents[1], repo])
        run(["git", "-C", repo, "update-ref", "--no-deref", "HEAD", sha])
    return copy_sources(repo / "examples" / "tensorlet")


def ninja_entries(build_dir: Path) -> dict[str, tuple[str, str]]:
    """.ninja_log: output -> (mtime, command hash) of the last time ninja ran its edge."""
    log = build_dir / ".ninja_log"
    entries = {}
    for line in (log.read_text().splitlines()[1:] if log.exists() else []):
        parts = line.split("\t")
        if len(parts) >= 5:
            entries[parts[3]] = (parts[2], parts[4])
    return entries


def compiled_since(before: dict[str, tuple[str, str]], build_dir: Path) -> list[str]:
    """The object files ninja compiled since `before` was read."""
    return sorted(out for out, entry in ninja_entries(build_dir).items()
                  if out.endswith(".o") and before.get(out) != entry)


def wheel_defining_entries(build_dir: Path) -> dict[str, str | None]:
    from buildkit.builder.cmake_cache import CMakeCache

    cache = CMakeCache.read(build_dir)
    return {name: cache.get_value(name) for name in WHEEL_DEFINING_ENTRIES}


class FullBuild:
    """A copy of tensorlet built by buildkit in an overlay venv: its CPU wheel first, then
    `buildkit develop` with FULL_BUILD_OPTIONS in the same build folder."""

    def __init__(self, root: Path, python: Path, env: dict[str, str]) -> None:
        self.root, self.python, self.env = root, python, env
        self.package = root / "tensorlet"
        self.build_dir = root / "build"
        self.cuda_requested = env.get("USE_CUDA") == "ON"
        self.cpu_wheel: Path | None = None
        self.cpu_entries: dict[str, str | None] = {}
        self.compiled: dict[str, list[str]] = {}  # phase -> object files compiled
        self.seconds: dict[str, float] = {}
        self.log = ""
        self._wheel: Path | None = None

    def phase(self, name: str, command: list, env: dict[str, str]) -> subprocess.CompletedProcess:
        import time

        before = ninja_entries(self.build_dir)
        start = time.perf_counter()
        result = run(command, cwd=self.root, env=env)
        self.seconds[name] = time.perf_counter() - start
        self.compiled[name] = compiled_since(before, self.build_dir)
        self.log += result.stdout + result.stderr
        return result

    def python_run(self, code: str, check: bool = True) -> subprocess.CompletedProcess:
        """`python -c code` in the overlay venv, outside the copy: tensorlet comes from the registration."""
        cmd = [str(self.python), "-c", code]
        result = subprocess.run(cmd, cwd=self.root.parent, env=self.env, capture_output=True, text=True, timeout=300)
        if check and result.returncode != 0:
            raise AssertionError(f"{code!r} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
        return result

    def build_config(self) -> dict:
        import json
        out = self.python_run("import json, tensorlet.config; print(json.dumps(tensorlet.config.build_info()))")
        return json.loads(out.stdout.strip().splitlines()[-1])

    def wheel(self) -> Path:
        """`python setup.py bdist_wheel` in the copy: reuses its build folder (nothing recompiles)."""
        if self._wheel is None:
            dist = self.root.parent / "dist"
            shutil.rmtree(dist, ignore_errors=True)
            run([self.python, "setup.py", "-q", "bdist_wheel", "--dist-dir", dist], cwd=self.root, env=self.env)
            (self._wheel,) = dist.glob("tensorlet-*.whl")
        return self._wheel


@pytest.fixture(scope="session")
def full_build(tmp_path_factory) -> FullBuild:
    """The second (and last) build of tensorlet in a test run.

    TENSORLET_FULL_BUILD_DIR keeps the copy and its build folder between runs (local
    iteration); by default it lives in the session's temporary folder."""
    if not have_tool("cmake") or not have_tool("ninja"):
        pytest.skip("cmake/ninja not available")
    kept = os.environ.get("TENSORLET_FULL_BUILD_DIR")
    base = Path(kept) if kept else tmp_path_factory.mktemp("tensorlet-full")
    base.mkdir(parents=True, exist_ok=True)
    root = copy_at_same_commit(base)
    python = overlay_venv(base / "venv")
    venv_vars = {"PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
                 "VIRTUAL_ENV": str(python.parent.parent)}
    env = steering_free_env(**FULL_BUILD_OPTIONS, **venv_vars)
    if nvcc_path() is None:  # still build everything else; the CUDA tests skip
        env["USE_CUDA"] = "OFF"
    else:
        env["CUDACXX"] = nvcc_path()
    build = FullBuild(root, python, env)

    # 1. The CPU wheel, with the options the README's in-place build uses.
    shutil.rmtree(base / "cpu-wheel", ignore_errors=True)
    build.phase("cpu wheel", [python, "setup.py", "-q", "bdist_wheel", "--dist-dir", base / "cpu-wheel"],
                steering_free_env(SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH, **venv_vars))
    (build.cpu_wheel,) = (base / "cpu-wheel").glob("tensorlet-*.whl")
    build.cpu_entries = wheel_defining_entries(build.build_dir)
    # 2. Everything optional on, in the same folder.
    build.phase("everything on", [python, "-m", "buildkit", "develop", root], env)
    return build


# ---- what a CUDA library embeds ----------------------------------------------------------
def cuobjdump_path() -> str | None:
    """cuobjdump from PATH, the venv (pip's nvidia-cuda-cuobjdump) or beside nvcc; None when absent."""
    candidates = [shutil.which("cuobjdump"), Path(sys.executable).parent / "cuobjdump"]
    if nvcc := nvcc_path():
        candidates.append(Path(nvcc).resolve().parent / "cuobjdump")
        candidates.append(Path("/usr/local/cuda/bin/cuobjdump"))
    return next((str(c) for c in candidates if c and Path(c).exists()), None)


def cuda_images(lib: Path) -> set[tuple[str, str]]:
    """The device images in a library, as {("elf", "sm_80"), ("ptx", "sm_80")}: from
    `cuobjdump --list-elf/--list-ptx` when it is installed, else read from the ELF's
    .nv_fatbin section (fatbin container header, magic 0xBA55ED50, then entries:
    u16 kind (1 PTX, 2 ELF), u16 version, u32 header size, u64 payload size, ...,
    u32 sm number at +28)."""
    import struct

    if cuobjdump := cuobjdump_path():
        found = set()
        for kind in ("elf", "ptx"):
            for line in run([cuobjdump, f"--list-{kind}", lib]).stdout.splitlines():
                if line.strip().endswith(f".{'cubin' if kind == 'elf' else 'ptx'}"):
                    found.add((kind, line.strip().split(".")[-2]))
        return found
    data = Path(lib).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2, "not a 64-bit ELF file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    found = set()
    for name, _type, _flags, _addr, offset, size in headers:
        if data[names_at + name:data.index(b"\0", names_at + name)] != b".nv_fatbin":
            continue
        pos, end = offset, offset + size
        while pos + 16 <= end:
            magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", data, pos)
            if magic != 0xBA55ED50:  # containers are 8-byte aligned; skip padding
                pos += 8
                continue
            entry = pos + header_size
            while entry < pos + header_size + fat_size:
                kind, _v, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
                arch, = struct.unpack_from("<I", data, entry + 28)
                found.add(({1: "ptx", 2: "elf"}.get(kind, f"kind{kind}"), f"sm_{arch}"))
                entry += entry_header + payload
            pos += header_size + fat_size
    return found
