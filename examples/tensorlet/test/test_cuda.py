"""CUDA: a compile+link build of libtensorlet_cuda for one architecture (needs
nvcc, no GPU), the architecture selection, and GPU kernel tests that skip
cleanly without a device."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, have_tool, nvcc_path, requires_build, run, tl, tool

pytestmark = pytest.mark.cuda
ARCH_SCRIPT = """
include("{module}")
tensorlet_select_cuda_architectures()
message(STATUS "ARCHS=${{CMAKE_CUDA_ARCHITECTURES}}")
"""


def _archs(tmp_path: Path, env_value: str | None = None, cache: str | None = None) -> str:
    script = tmp_path / "archs.cmake"
    script.write_text(ARCH_SCRIPT.format(module=(ROOT / "cmake" / "CudaArchitectures.cmake").as_posix()))
    env = {k: v for k, v in os.environ.items() if k != "TENSORLET_CUDA_ARCH_LIST"}
    if env_value is not None:
        env["TENSORLET_CUDA_ARCH_LIST"] = env_value
    args = [tool("cmake")] + ([f"-DTENSORLET_CUDA_ARCH_LIST={cache}"] if cache else []) + ["-P", str(script)]
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return (out.stdout + out.stderr).split("ARCHS=")[1].strip()


@pytest.mark.skipif(not have_tool("cmake"), reason="cmake not available")
def test_architecture_selection(tmp_path):
    assert _archs(tmp_path) == "75-real;80-real;90"  # sm_75 is CUDA 13's minimum
    assert _archs(tmp_path, "8.0") == "80-real"
    assert _archs(tmp_path, "7.5;8.6 9.0+PTX") == "75-real;86-real;90"
    assert _archs(tmp_path, cache="8.9") == "89-real"


@pytest.mark.slow
@pytest.mark.skipif(nvcc_path() is None, reason="nvcc not found")
@pytest.mark.skipif(not have_tool("cmake") or not have_tool("ninja"), reason="cmake/ninja not available")
def test_cuda_build_compiles_and_links():
    # A kept build folder keeps reruns incremental; the first run compiles libtensorlet too.
    build = Path(os.environ.get("TENSORLET_CUDA_TEST_BUILD_DIR", "/tmp/tensorlet-build-cuda"))
    env = dict(os.environ, TENSORLET_CUDA_ARCH_LIST="8.0")
    run([tool("cmake"), "-S", ROOT, "-B", build, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}",
         "-DUSE_CUDA=ON", f"-DCMAKE_CUDA_COMPILER={nvcc_path()}", f"-DPython_EXECUTABLE={sys.executable}",
         "-UCMAKE_CUDA_ARCHITECTURES"], env=env)
    cache = (build / "CMakeCache.txt").read_text()
    assert "CMAKE_CUDA_ARCHITECTURES:STRING=80-real" in cache
    run([tool("cmake"), "--build", build, "--target", "tensorlet_cuda", "-j", "2"], env=env)
    lib = build / "libtensorlet_cuda.so"
    assert lib.exists()
    dyn = run(["readelf", "-d", lib]).stdout
    assert "libcudart" in dyn and "libtensorlet.so" in dyn
    symbols = run(["nm", "-D", "--defined-only", lib]).stdout
    assert "tensorlet_cuda_device_count" in symbols
    if have_tool("cuobjdump"):
        assert "sm_80" in run(["cuobjdump", "--list-elf", lib]).stdout


gpu = pytest.mark.skipif(tl is None or not tl.cuda.is_available(), reason="no CUDA device (or CUDA build)")


@requires_build
@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_kernels_match_cpu(dtype):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((33, 17)).astype(dtype), rng.standard_normal((17,)).astype(dtype)
    ca, cb = tl.from_numpy(a).cuda(), tl.from_numpy(b).cuda()
    assert ca.device.type == "cuda"
    np.testing.assert_allclose((ca + cb).cpu().numpy(), a + b, rtol=1e-5)
    np.testing.assert_allclose(tl.add(ca, cb, alpha=2).cpu().numpy(), a + 2 * b, rtol=1e-5)
    np.testing.assert_allclose((ca * cb).cpu().numpy(), a * b, rtol=1e-5)
    np.testing.assert_allclose(ca.sum().cpu().item(), a.sum(), rtol=1e-4)
    m = rng.standard_normal((17, 9)).astype(dtype)
    np.testing.assert_allclose(tl.mm(ca, tl.from_numpy(m).cuda()).cpu().numpy(), a @ m, rtol=1e-4, atol=1e-4)
    z = tl.zeros(4, device="cuda").fill_(3.0)
    assert z.cpu().tolist() == [3.0] * 4
    with pytest.raises(NotImplementedError, match="no kernel for op tensorlet::exp on key CUDA"):
        ca.exp()
