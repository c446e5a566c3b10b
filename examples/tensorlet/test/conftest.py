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

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buildkit.builder.configure.cmake_cache import CMakeCache
from buildkit_testing.cuda import find_nvcc
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import run, steering_free_env
from buildkit_testing.projects import copy_sources
from buildkit_testing.venvs import activated, make_wheelhouse, overlay_venv

ROOT = Path(__file__).resolve().parents[1]
# The package under test, imported from its source tree (built in place).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

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


def compile_extension(source: Path, out: Path) -> Path:
    """Builds a C++ extension library against the installed tensorlet headers and libtensorlet."""
    cxx = os.environ.get("CXX", "g++")
    include, library = tl.utils.include_path, tl.utils.library_path
    run([cxx, "-std=c++20", "-O1", "-shared", "-fPIC", source, "-I", include, "-I", Path(include) / "tensorlet",
         "-L", library, "-ltensorlet", f"-Wl,-rpath,{library}", "-o", out])
    return out


# ---- the feature-complete build (session scope) ---------------------------------------
# Besides the in-place CPU build the tests import, a test run builds tensorlet once
# more, through buildkit: first with the default options, then with everything
# optional on. Only this fixture builds it.
FULL_BUILD_OPTIONS = {"USE_CUDA": "ON", "TENSORLET_CUDA_ARCH_LIST": "8.0", "USE_BLAS": "ON", "USE_TLPROF": "ON",
                      "BUILD_FUNCTIONAL": "ON"}
# The reproducibility builds' timestamp (2023-11-14).
SOURCE_DATE_EPOCH = "1700000000"
# Cache entries that decide what the CPU wheel holds: the in-place build and the copy's
# first phase must agree on them before their wheels can be compared.
WHEEL_DEFINING_ENTRIES = ("CMAKE_BUILD_TYPE", "BUILDKIT_WHEEL_MODE", "USE_OPENMP", "USE_BLAS", "USE_CUDA", "USE_TLPROF",
                          "BUILD_FUNCTIONAL", "TENSORLET_CPU_VARIANTS")


def git_head(folder: Path) -> str | None:
    done = run(["git", "rev-parse", "--verify", "--quiet", "HEAD"], cwd=folder, check=False) \
        if shutil.which("git") else None
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
    # Copies keep mtimes: a kept copy (TENSORLET_FULL_BUILD_DIR) rebuilds incrementally.
    return copy_sources(ROOT, repo / "examples" / "tensorlet")


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
    cache = CMakeCache.read(build_dir)
    return {name: cache.get_value(name) for name in WHEEL_DEFINING_ENTRIES}


class FullBuild:
    """A copy of tensorlet built by buildkit in an overlay venv: its CPU wheel first, then
    `buildkit develop` with FULL_BUILD_OPTIONS in the same build folder."""

    def __init__(self, root: Path, python: Path, env: dict[str, str]) -> None:
        self.root, self.python, self.env = root, python, env
        self.package = root / "tensorlet"
        self.build_dir = build_folder(root)
        self.cuda_requested = env.get("USE_CUDA") == "ON"
        self.cpu_wheel: Path | None = None
        self.cpu_entries: dict[str, str | None] = {}
        self.compiled: dict[str, list[str]] = {}  # phase -> object files compiled
        self.seconds: dict[str, float] = {}
        self.log = ""
        self._wheel: Path | None = None

    def phase(self, name: str, command: list, env: dict[str, str]) -> subprocess.CompletedProcess:
        before = ninja_entries(self.build_dir)
        start = time.perf_counter()
        # No time limit: on a 2-core machine a phase can outlast run()'s default.
        result = run(command, cwd=self.root, env=env, timeout=None)
        self.seconds[name] = time.perf_counter() - start
        self.compiled[name] = compiled_since(before, self.build_dir)
        self.log += result.stdout + result.stderr
        return result

    def python_run(self, code: str, check: bool = True) -> subprocess.CompletedProcess:
        """`python -c code` in the overlay venv, outside the copy: tensorlet comes from the registration."""
        return run([self.python, "-c", code], cwd=self.root.parent, env=self.env, check=check, timeout=300)

    def build_config(self) -> dict:
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
    env = steering_free_env(**FULL_BUILD_OPTIONS, **activated(python))
    if find_nvcc() is None:  # still build everything else; the CUDA tests skip
        env["USE_CUDA"] = "OFF"
    else:
        env["CUDACXX"] = find_nvcc()
    build = FullBuild(root, python, env)

    # 1. The CPU wheel, with the options the README's in-place build uses.
    shutil.rmtree(base / "cpu-wheel", ignore_errors=True)
    build.phase("cpu wheel", [python, "setup.py", "-q", "bdist_wheel", "--dist-dir", base / "cpu-wheel"],
                steering_free_env(SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH, **activated(python)))
    (build.cpu_wheel,) = (base / "cpu-wheel").glob("tensorlet-*.whl")
    build.cpu_entries = wheel_defining_entries(build.build_dir)
    # 2. Everything optional on, in the same folder.
    build.phase("everything on", [python, "-m", "buildkit", "develop", root], env)
    return build


@pytest.fixture(scope="session")
def tensorlet_wheelhouse(request, tmp_path_factory) -> Path:
    """The run's wheelhouse (buildkit's wheel, its dependencies, pyyaml, numpy): the
    repository's conftest.py makes it when pytest runs from the repository root; run
    from examples/tensorlet, this tree makes its own the same way."""
    try:
        return request.getfixturevalue("wheelhouse")
    except pytest.FixtureLookupError:
        return make_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))


# ---- the op-info coverage table (test_opinfo.py) ---------------------------------------
SHORT = {"bool": "b8", "uint8": "u8", "int32": "i32", "int64": "i64", "float32": "f32", "float64": "f64"}


def pytest_terminal_summary(terminalreporter) -> None:
    """op x backend x dtype, as test_opinfo.py found it: ok (matches NumPy), refused (the
    stated error, checked), skipped (and why), FAILED."""
    cells: dict[tuple[str, str], dict[str, list[str]]] = {}
    reasons: dict[str, set[str]] = {}
    for outcome in ("passed", "failed", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            props = dict(getattr(report, "user_properties", ()))
            if "opinfo" not in props or (report.when != "call" and outcome != "skipped"):
                continue
            op, backend, dtype = props["opinfo"]
            declared = props["coverage"]  # ok or refused
            status = {"failed": f"FAILED({declared})", "skipped": f"skipped({declared})"}.get(outcome, declared)
            cells.setdefault((op, backend), {}).setdefault(status, []).append(SHORT[dtype])
            if outcome == "skipped":
                reasons.setdefault(backend, set()).add(str(report.longrepr[-1]).removeprefix("Skipped: "))
    if not cells:
        return
    backends = sorted({b for _, b in cells}, key=["cpu", "cuda"].index)
    write = terminalreporter.write_line
    terminalreporter.section("op-info coverage: op x backend x dtype")
    write("| op | " + " | ".join(backends) + " |")
    write("|---|" + "---|" * len(backends))
    for op in dict.fromkeys(op for op, _ in cells):
        row = []
        for backend in backends:
            by_status = cells.get((op, backend), {})
            row.append("; ".join(f"{status} {' '.join(d)}" for status, d in by_status.items()) or "-")
        write(f"| {op} | " + " | ".join(row) + " |")
    for backend, why in sorted(reasons.items()):
        write(f"{backend} skipped: " + "; ".join(sorted(why)))
