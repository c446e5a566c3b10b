"""benchmarks/kernels.py (at the repository root) in its --smoke mode: every row
runs and checks its result against NumPy, on the in-place build and on the
session's full build (USE_BLAS: the BLAS row and the run-time BLAS switch); and
benchmarks/cuda_kernels.py, which measures only where a GPU exists and says why
it measured nothing elsewhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from buildkit_testing.processes import run
from conftest import ROOT, requires_build

SCRIPT = ROOT.parents[1] / "benchmarks" / "kernels.py"
CUDA_SCRIPT = SCRIPT.with_name("cuda_kernels.py")
pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="benchmarks/kernels.py is not in this checkout")


@requires_build
def test_smoke_on_the_in_place_build():
    out = run([sys.executable, SCRIPT, "--smoke", "--tensorlet", ROOT], timeout=300).stdout
    for row in ("add 4K (out=)", "add 16K (out=)", "sum 16K", "matmul 64 (own kernel)", "x + x (1 element)"):
        assert f"| {row}" in out, out


def _smoke_on_full_build(full_build, script: Path) -> subprocess.CompletedProcess:
    result = subprocess.run([full_build.python, script, "--smoke", "--tensorlet", full_build.root],
                            env=full_build.env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def _check_cuda_benchmark(stdout: str, built_with_cuda: bool) -> None:
    """Without CUDA or a device: the reason. With both: every row measured and checked."""
    if not built_with_cuda:
        assert "no CUDA device to measure on (tensorlet was built without CUDA)" in stdout, stdout
    elif "no CUDA device to measure on" in stdout:
        assert "built without CUDA" not in stdout  # libtensorlet_cuda loaded; the device is missing
    else:
        for row in ("copy (baseline)", "add", "sum", "mul"):
            assert f"| {row} |" in stdout, stdout


@pytest.mark.slow
def test_smoke_with_blas(full_build):
    if not full_build.build_config()["blas"]:
        pytest.skip("the full build found no BLAS (apt-get install libopenblas-dev)")
    result = _smoke_on_full_build(full_build, SCRIPT)
    assert "BLAS=ON" in result.stdout and "| matmul 64 (USE_BLAS)" in result.stdout
    assert "| matmul 64 (own kernel)" in result.stdout and "no run-time BLAS switch" not in result.stderr


@requires_build
def test_cuda_benchmark_on_the_in_place_build():
    import tensorlet.config

    result = run([sys.executable, CUDA_SCRIPT, "--smoke", "--tensorlet", ROOT], timeout=300)
    _check_cuda_benchmark(result.stdout, tensorlet.config.build_info()["cuda"])


@pytest.mark.slow
@pytest.mark.cuda
def test_cuda_benchmark_on_the_cuda_build(full_build):
    if not full_build.build_config()["cuda"]:
        pytest.skip("the full build has no CUDA (nvcc not found)")
    _check_cuda_benchmark(_smoke_on_full_build(full_build, CUDA_SCRIPT).stdout, built_with_cuda=True)
