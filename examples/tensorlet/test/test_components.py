"""The optional components, from the session's full build (conftest.full_build:
one buildkit build with USE_BLAS, USE_TLPROF and BUILD_FUNCTIONAL on): the BLAS
matmul path, the profiler's headers and library in the wheel (the package-data
rule `when = "USE_TLPROF"`), and the functional extension and console script."""

from __future__ import annotations

import fnmatch
import glob
import os
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit_testing.processes import run
from conftest import ROOT, requires_build

pytestmark = pytest.mark.slow

PROFILER_FILES = ("tensorlet/include/tensorlet/profiler/*.h", "tensorlet/lib/libtensorlet_profiler*")


def _openblas_dev() -> list[str]:
    """The link-time libraries CMake's FindBLAS can use (the -dev packages' unversioned .so)."""
    return [p for pattern in ("/usr/lib/*/libopenblas.so", "/usr/lib/libopenblas.so", "/usr/lib64/libopenblas.so",
                              "/usr/lib/*/openblas*/libblas.so")
            for p in glob.glob(pattern)]


def _matching(names: list[str], pattern: str) -> list[str]:
    return [n for n in names if fnmatch.fnmatch(n, pattern)]


# ---- BLAS -----------------------------------------------------------------------------
def test_blas_matmul(full_build):
    if not _openblas_dev():
        pytest.skip("OpenBLAS is not installed (apt-get install libopenblas-dev; .ci/run installs it): "
                    "the full build fell back to tensorlet's own GEMM")
    config = run([full_build.python.parent / "tensorlet-config"], env=full_build.env).stdout
    assert "BLAS:         ON" in config, config
    assert full_build.build_config()["blas"]
    lib = full_build.package / "lib" / "libtensorlet.so"
    assert "blas" in run(["readelf", "-d", lib]).stdout
    undefined = run(["nm", "-D", "--undefined-only", lib]).stdout.split()
    assert "sgemm_" in undefined and "dgemm_" in undefined
    # Contiguous, transposed and sliced operands: each goes to sgemm/dgemm with its own layout.
    out = full_build.python_run("""
import numpy as np, tensorlet as tl
rng = np.random.default_rng(0)
for dtype, tol in (("float32", 1e-4), ("float64", 1e-10)):
    a = rng.standard_normal((130, 257)).astype(dtype)
    b = rng.standard_normal((257, 70)).astype(dtype)
    ta, tb = tl.from_numpy(a), tl.from_numpy(b)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=tol, atol=tol)
    np.testing.assert_allclose((tb.t() @ ta.t()).numpy(), b.T @ a.T, rtol=tol, atol=tol)
    np.testing.assert_allclose((ta[::2] @ tb).numpy(), a[::2] @ b, rtol=tol, atol=tol)
    x = rng.standard_normal((4, 33, 17)).astype(dtype)
    y = rng.standard_normal((4, 17, 9)).astype(dtype)
    np.testing.assert_allclose(tl.bmm(tl.from_numpy(x), tl.from_numpy(y)).numpy(), x @ y, rtol=tol, atol=tol)
print("ok")
""")
    assert out.stdout.strip() == "ok"
    # TENSORLET_USE_BLAS=0 (README, "At run time") starts the process on the built-in GEMM:
    # tensorlet_set_blas_enabled returns the state it replaces.
    previous_state = ("import ctypes, os, tensorlet as tl\n"
                      "lib = ctypes.CDLL(os.path.join(tl.utils.library_path, 'libtensorlet.so'))\n"
                      "print(lib.tensorlet_set_blas_enabled(1))\n")
    # -1: not a switch (the matmuls raise a ValueError naming it; test_runtime_switches.py).
    for value, state in (("0", "0"), ("off", "0"), ("FALSE", "0"), ("1", "1"), ("yes", "1"), (None, "1"),
                         ("of", "-1")):
        env = {k: v for k, v in full_build.env.items() if k != "TENSORLET_USE_BLAS"}
        env.update({"TENSORLET_USE_BLAS": value} if value is not None else {})
        seen = run([full_build.python, "-c", previous_state], cwd=full_build.root.parent, env=env).stdout.strip()
        assert seen == state, (value, seen)


# ---- the profiler (USE_TLPROF) --------------------------------------------------------
def test_profiler_ships_in_the_wheel(full_build):
    names = zipfile.ZipFile(full_build.wheel()).namelist()
    headers = _matching(names, PROFILER_FILES[0])
    assert "tensorlet/include/tensorlet/profiler/Profiler.h" in headers
    assert _matching(names, PROFILER_FILES[1]) == ["tensorlet/lib/libtensorlet_profiler.so"]
    # ... and what the wheel holds is what the build installed.
    installed = {p.relative_to(full_build.root).as_posix()
                 for p in (full_build.package / "include" / "tensorlet" / "profiler").glob("*.h")}
    assert installed == set(headers)


def test_profiler_works(full_build):
    out = full_build.python_run("""
import tensorlet as tl, tensorlet.profiler
assert tensorlet.profiler.is_available()
x = tl.ones(64, 64)
with tensorlet.profiler.profile() as prof:
    (x @ x).relu().sum()
names = {e["name"]: e for e in prof.key_averages()}
print(names["tensorlet::matmul"]["calls"])
""")
    assert out.stdout.strip() == "1"


def _in_place_build_is_current() -> bool:
    """No source newer than the installed libraries (then a wheel build compiles nothing)."""
    libs = [ROOT / "tensorlet" / "lib" / name for name in ("libtensorlet.so", "libtensorlet_python.so")]
    if not all(lib.exists() for lib in libs):
        return False
    built = min(lib.stat().st_mtime for lib in libs)
    sources = [ROOT / "CMakeLists.txt", ROOT / "ops.yaml", ROOT / "derivatives.yaml",
               *(ROOT / "csrc").rglob("*"), *(ROOT / "tensorlet_gen").rglob("*.py"), *(ROOT / "cmake").rglob("*")]
    return all(p.stat().st_mtime <= built for p in sources if p.is_file())


@requires_build
def test_cpu_wheel_has_no_profiler(tmp_path):
    """The in-place CPU build has USE_TLPROF off: its wheel leaves the profiler out.
    (Packaging only: the CMake build is up to date, only the _C stub is linked again.)"""
    from tensorlet import _build_config
    if _build_config.profiler:
        pytest.skip("the in-place build has USE_TLPROF on")
    if not _in_place_build_is_current():
        pytest.skip("sources changed since the in-place build: run `buildkit develop examples/tensorlet` first "
                    "(this test packages that build; it must not compile it)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUILD_", "USE_", "CMAKE_", "TENSORLET_"))}
    dist = tmp_path / "dist"
    # The build step rewrites tensorlet/version.py when HEAD moved since the in-place
    # build; the tests' own process imported the old one, so keep it as it was.
    version_py = ROOT / "tensorlet" / "version.py"
    saved = version_py.read_bytes() if version_py.exists() else None
    try:
        # setuptools' staging folders go to tmp_path, not into the source tree's build/.
        run([sys.executable, "setup.py", "-q", "build", "--build-base", tmp_path / "build", "egg_info", "--egg-base",
             tmp_path, "bdist_wheel", "--dist-dir", dist, "--bdist-dir", tmp_path / "bdist"], cwd=ROOT, env=env)
    finally:
        if saved is not None and (not version_py.exists() or version_py.read_bytes() != saved):
            version_py.write_bytes(saved)
    (wheel,) = dist.glob("tensorlet-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tensorlet/lib/libtensorlet.so" in names and "tensorlet/include/tensorlet/tensorlet.h" in names
    for pattern in PROFILER_FILES:
        assert not _matching(names, pattern), pattern


# ---- the functional component (BUILD_FUNCTIONAL) ----------------------------------------
def test_functional_extension_and_script_are_registered(full_build):
    ext = full_build.python_run("import tensorlet.functional._functional_C as m; print(m.__file__)").stdout.strip()
    assert Path(ext).parent == full_build.package / "functional"
    # The console script, registered in the overlay venv by `buildkit develop`.
    script = full_build.python.parent / "tensorlet-functional"
    assert script.exists()
    res = run([script, "--size", "2"], env=full_build.env, cwd=full_build.root.parent)
    assert "vmap(sum of squares)(xs) = [1.0, 13.0]" in res.stdout
    eps = full_build.python_run(
        "from importlib.metadata import distribution\n"
        "print(*sorted(f'{e.name}={e.value}' for e in distribution('tensorlet').entry_points"
        " if e.group == 'console_scripts'))").stdout.split()
    assert "tensorlet-functional=tensorlet.functional.cli:main" in eps and "tensorlet-config=tensorlet.config:main" in eps
    # The wheel carries both too.
    with zipfile.ZipFile(full_build.wheel()) as wheel:
        names = wheel.namelist()
        assert _matching(names, "tensorlet/functional/_functional_C*.so")
        (entry_points,) = _matching(names, "tensorlet-*.dist-info/entry_points.txt")
        text = wheel.read(entry_points).decode()
    assert "tensorlet-functional = tensorlet.functional.cli:main" in text
