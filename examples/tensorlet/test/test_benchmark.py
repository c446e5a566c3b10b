"""benchmarks/kernels.py (at the repository root) in its --smoke mode: every row
runs and checks its result against NumPy, on the in-place build and on the
session's full build (USE_BLAS: the BLAS row and the run-time BLAS switch)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT, requires_build, run

SCRIPT = ROOT.parents[1] / "benchmarks" / "kernels.py"
pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="benchmarks/kernels.py is not in this checkout")


@requires_build
def test_smoke_on_the_in_place_build():
    out = run([sys.executable, SCRIPT, "--smoke", "--tensorlet", ROOT], timeout=300).stdout
    for row in ("add 4K (out=)", "add 16K (out=)", "sum 16K", "matmul 64 (own kernel)", "x + x (1 element)"):
        assert f"| {row}" in out, out


@pytest.mark.slow
def test_smoke_with_blas(full_build):
    if not full_build.build_config()["blas"]:
        pytest.skip("the full build found no BLAS (apt-get install libopenblas-dev)")
    result = subprocess.run([full_build.python, SCRIPT, "--smoke", "--tensorlet", full_build.root],
                            env=full_build.env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BLAS=ON" in result.stdout and "| matmul 64 (USE_BLAS)" in result.stdout
    assert "| matmul 64 (own kernel)" in result.stdout and "no run-time BLAS switch" not in result.stderr
