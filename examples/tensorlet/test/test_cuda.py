"""CUDA: libtensorlet_cuda from the session's full build (one architecture,
sm_80; needs nvcc, no GPU), the architecture selection, and GPU kernel tests of
the in-place build that skip, with the reason, without a device or a CUDA build
(test_opinfo.py's cuda rows check every op)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import op_table
import pytest
from test_op_table import registered_backends

from buildkit.package.elf import read_elf_dynamic
from buildkit_testing.cuda import (
    bubblewrap_unavailable,
    cuda_toolchain_wheels,
    device_images,
    find_nvcc,
    without_system_cuda,
    without_system_cuda_env,
)
from buildkit_testing.processes import run
from buildkit_testing.projects import copy_sources
from buildkit_testing.venvs import make_venv, pip_into, site_packages
from conftest import ROOT, have_tool, tl, tool

GPU_PRESENT = Path("/dev/nvidiactl").exists() or Path("/dev/nvidia0").exists()

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


# What the shared layer decides once for every backend (ops/Elementwise.cpp's
# binary_iteration, ops/TensorIterator.h, ops/Reduce.h), and dtype decisions outside the
# TL_DISPATCH_* macros: none of it may reappear in the CUDA backend.
CUDA_BACKEND_MUST_NOT = {
    r"\bresult_type\(": "computes a result dtype",
    r"\bbroadcast_shapes\(": "computes a broadcast shape",
    r"\bprepare_out\(": "checks out= itself",
    r"\bcommon_device\(": "decides the device itself",
    r"ScalarType::": "names a dtype outside the dispatch macros",
    r"switch\s*\(\s*[\w.]*(dtype|scalar_type)\(\)\s*\)": "switches on a dtype",
}


def test_cuda_backend_only_runs_loops():
    """Issue 15's rule for csrc/ops/cuda: dtypes, shapes and out= come from the shared layer."""
    sources = sorted((ROOT / "csrc" / "ops" / "cuda").glob("*.*"))
    assert any(p.suffix == ".cu" for p in sources), sources
    found = []
    for path in sources:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            found += [f"{path.name}:{number}: {why}: {line.strip()}" for pattern, why in CUDA_BACKEND_MUST_NOT.items()
                      if re.search(pattern, code)]
    assert not found, "\n".join(found)


# Issue 15's other half: the CPU loops run the shared bodies (ops/BinaryOps.h, UnaryOps.h,
# ReduceOps.h), so the CPU op-info rows test the arithmetic the CUDA kernels run. A CPU
# loop file (all of csrc/ops/cpu but the SIMD fast paths, VecKernels*, and the GEMMs,
# LinearKernels.cpp, which have no shared body: CUDA's gemm_kernel folds its own
# products too) must not write an op's body again: what each pattern catches, and a
# line of such a body it caught.
SHARED_BODY_HEADERS = ("BinaryOps.h", "UnaryOps.h", "ReduceOps.h")
CPU_LOOPS_MUST_NOT = {
    r"\bcase\s+(UnaryOp|BinaryOp)::": ("picks a body per op (visit_unary / visit_binary do)", "case UnaryOp::Neg:"),
    r"\b([\w.]+(\[\w+\])?)\s*!=\s*\1\b": ("tests for NaN (the shared bodies hold the NaN rules)",
                                       "return (a > T(0) || a != a) ? a : T(0);"),
    r"numeric_limits": ("chooses a reduction's identity", "return -std::numeric_limits<T>::infinity();"),
    r"\b([\w.]+(\[\w+\])?)\s*=\s*(static_cast<\w+>\()?\1\s*(\+|-|\*|/|\|\||&&)(?!=)":
        ("folds an accumulator itself", "o[k] = static_cast<T>(o[k] + row[k]);"),
}


def _shared_bodies(ops_dir: Path) -> tuple[set[str], set[str]]:
    """What a CPU loop must name (each visit_* and each body no visit_* reaches: one not
    named after an op of Elementwise.h's lists) and the std:: math the bodies call."""
    op_names = set(re.findall(r"_\(\w+, (\w+)", (ops_dir / "Elementwise.h").read_text()))
    must_name, math = set(), set()
    for header in SHARED_BODY_HEADERS:
        text = (ops_dir / header).read_text()
        must_name |= set(re.findall(r"\bvoid (visit_\w+)\(", text))
        for name, body in re.findall(r"struct (\w+) \{(.*?)\n\};", text, re.S):
            if "operator()" in body or "step(" in body:
                math |= set(re.findall(r"std::(\w+)\(", body))
                if name not in op_names:
                    must_name.add(name)
    return must_name, math


def _own_bodies(code: str, math: set[str]) -> list[str]:
    rules = {pattern: why for pattern, (why, _) in CPU_LOOPS_MUST_NOT.items()}
    rules[r"\bstd::(" + "|".join(sorted(math)) + r")\("] = "computes a unary op's math"
    return [why for pattern, why in rules.items() if re.search(pattern, code)]


def _entry_point_macros(ops_dir: Path) -> dict[str, str]:
    """The shared layer's entry-point macros (TL_*_KERNELS, e.g. Reduce.h's
    TL_REDUCE_KERNELS), name -> definition: a backend that stamps one out runs the
    bodies the definition names."""
    text = "\n".join(p.read_text() for p in sorted(ops_dir.glob("*.h")))
    return dict(re.findall(r"#define (TL_\w+_KERNELS)\(.*?\)((?:.*\\\n)*.*)", text))


def test_cpu_loops_run_the_shared_bodies():
    """Issue 15: the CPU backend's generic loops call the bodies the CUDA kernels run."""
    ops_dir = ROOT / "csrc" / "ops"
    must_name, math = _shared_bodies(ops_dir)
    # The headers were read: the rules below are not empty.
    assert {"visit_unary", "visit_binary", "Where", "SumReducer", "MaxReducer", "ArgMaxReducer"} <= must_name
    assert {"exp", "log", "sqrt", "tanh"} <= math
    for pattern, (why, body_line) in CPU_LOOPS_MUST_NOT.items():
        assert why in _own_bodies(body_line, math), (pattern, body_line)
    assert _own_bodies("return unary_loop<T, T>(plan, [](T a) { return std::tanh(a); });", math)

    sources = sorted(p for p in (ops_dir / "cpu").iterdir()
                     if not p.name.startswith("VecKernels") and p.name != "LinearKernels.cpp")
    assert {"UnaryKernels.cpp", "BinaryKernels.cpp", "ReduceKernels.cpp"} <= {p.name for p in sources}
    macros = _entry_point_macros(ops_dir)
    assert "TL_REDUCE_KERNELS" in macros and "ArgMaxReducer" in macros["TL_REDUCE_KERNELS"]
    found, named = [], ""
    for path in sources:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            named += code + "\n"
            named += "".join(definition for macro, definition in macros.items() if re.search(rf"\b{macro}\(", code))
            found += [f"{path.name}:{number}: {why}: {line.strip()}" for why in _own_bodies(code, math)]
    found += [f"no CPU loop names {name} (a shared body)" for name in sorted(must_name)
              if not re.search(rf"\b{name}\b", named)]
    assert not found, "\n".join(found)


needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not found: the full build has USE_CUDA=OFF")


def _tool_output(*cmd) -> str:
    return run(list(cmd)).stdout


@pytest.mark.slow
@needs_nvcc
def test_cuda_build_compiles_and_links(full_build):
    """The session's full build (conftest.full_build, through buildkit) made
    libtensorlet_cuda for sm_80 only (plus its PTX), linked against the shared CUDA runtime."""
    from buildkit.builder.toolchain.cuda_arch import normalize_cuda_architectures

    # buildkit turns TENSORLET_CUDA_ARCH_LIST=8.0 into CMAKE_CUDA_ARCHITECTURES: sm_80 code
    # plus, on the newest (only) entry, compute_80 PTX; CMakeLists keeps a value it is given.
    archs = normalize_cuda_architectures(full_build.env["TENSORLET_CUDA_ARCH_LIST"])
    assert archs == "80"
    cache = (full_build.build_dir / "CMakeCache.txt").read_text()
    assert f"CMAKE_CUDA_ARCHITECTURES:UNINITIALIZED={archs}\n" in cache
    lib = full_build.package / "lib" / "libtensorlet_cuda.so"
    assert lib.exists(), full_build.log[-3000:]
    # Shared cudart (found through the system's loader path, like libcudart from the
    # CUDA toolkit or the nvidia-cuda-runtime wheel), never a static copy.
    dyn = _tool_output("readelf", "-d", lib)
    assert "libcudart.so" in dyn and "libtensorlet.so" in dyn
    assert "cudart_static" not in _tool_output("nm", "-D", lib)
    exported = _tool_output("nm", "-D", "--defined-only", lib)
    for symbol in ("tensorlet_cuda_device_count", "tensorlet_cuda_synchronize", "tensorlet_cuda_device_name"):
        assert symbol in exported, symbol  # what tensorlet.cuda calls through ctypes
    # libtensorlet itself never needs the CUDA runtime: CPU-only machines load it as is.
    assert "cudart" not in _tool_output("readelf", "-d", full_build.package / "lib" / "libtensorlet.so")
    # sm_80 code plus its PTX, nothing else (cuobjdump --list-elf/--list-ptx; read directly without it).
    assert set(device_images(lib)) == {("elf", "sm_80"), ("ptx", "sm_80")}
    info = full_build.build_config()
    assert info["cuda"] and info["cuda_archs"] == archs


@pytest.mark.slow
@needs_nvcc
def test_cuda_kernels_are_the_op_tables_cuda_column(full_build):
    """The session's CUDA build (no GPU needed): the dispatcher's registered CUDA kernels,
    with the composite ones that run on every backend, are exactly op_table.py's cuda
    column: every overload of ops.yaml, none missing, none extra."""
    if not full_build.cuda_requested:
        pytest.skip("nvcc not found: the session's full build has no CUDA")
    out = full_build.python_run(
        "import json, tensorlet as tl; assert tl.cuda.is_built()\n"
        "print(json.dumps({n.removeprefix('tensorlet::'): tl.ops.dispatch_table(n) for n in tl.ops.names()"
        " if n.startswith('tensorlet::')}))")
    tables = json.loads(out.stdout.strip().splitlines()[-1])
    assert sorted(tables) == sorted(row.name for row in op_table.ROWS)
    differ = [row.name for row in op_table.ROWS
              if ("cuda" in registered_backends(tables[row.name])) != row.has_kernel("cuda")]
    assert not differ, f"CUDA registrations that are not the table's cuda column: {differ}"


def test_cuda_build_imports_on_a_cpu_only_machine(full_build):
    """Importing the CUDA build without a GPU works: CPU tensors compute, CUDA says unavailable."""
    out = full_build.python_run(
        "import tensorlet as tl\n"
        "print(tl.__file__)\n"
        "print(tl.cuda.is_built(), tl.cuda.is_available(), tl.cuda.device_count(), tl._libraries.cuda_error)\n"
        "print((tl.ones(3) * 2).sum().item())\n").stdout.splitlines()
    assert Path(out[0]).is_relative_to(full_build.package)
    built, available, count, error = out[1].split(" ", 3)
    assert out[2] == "6.0"
    # libcudart comes from the system's loader path; where it is missing the loader
    # records why and tensorlet stays CPU-only rather than failing to import.
    assert built == "True" or "libcudart" in error
    if not GPU_PRESENT:
        assert (available, count) == ("False", "0")
        failed = full_build.python_run("import tensorlet as tl; tl.cuda.synchronize()", check=False)
        assert failed.returncode != 0 and "RuntimeError: CUDA is not available" in failed.stderr, failed.stderr


MAPPED_CUDART = ("import tensorlet as tl\n"
                 "print((tl.ones(3) * 2).sum().item(), tl.cuda.is_available())\n"
                 "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcudart' in l}))\n")


def test_cuda_runtime_comes_from_nvidia_wheel(full_build, tensorlet_wheelhouse, tmp_path):
    """cuda-runtime = "wheel" (the default): the wheel requires NVIDIA's runtime wheel instead
    of carrying libcudart, reaches it through an rpath, and a fresh venv loads it from there."""
    if not full_build.cuda_requested:
        pytest.skip("nvcc not found: no CUDA build to package")
    wheel = full_build.wheel()
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        cuda = read_elf_dynamic(archive.read("tensorlet/lib/libtensorlet_cuda.so"))
    requirement = next(line for line in metadata.splitlines() if line.startswith("Requires-Dist: nvidia-cuda-runtime"))
    assert set(requirement.split(" ", 1)[1][len("nvidia-cuda-runtime"):].split(",")) == {">=13.0", "==13.*"}
    assert not any("libcudart" in name for name in names)
    assert "libcudart.so.13" in cuda.needed and "$ORIGIN/../../nvidia/cu13/lib" in cuda.runpath

    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, tensorlet_wheelhouse, "install", "-q", "--no-index", wheel)  # numpy, nvidia-cuda-runtime too
    here = tmp_path / "elsewhere"
    here.mkdir()
    computed, mapped = run([python, "-c", MAPPED_CUDART], cwd=here).stdout.splitlines()
    assert computed == ("6.0 False" if not GPU_PRESENT else "6.0 True")
    assert mapped == str([str(site_packages(python) / "nvidia" / "cu13" / "lib" / "libcudart.so.13")])


# A second CUDA compile of all of tensorlet (about 4 minutes on 2 cores): run on demand with the
# torch-marked tests (`pytest -m torch examples/tensorlet/test/test_cuda.py`), though it needs no torch.
@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.cuda
def test_pip_install_with_cuda_from_nvidia_wheels_alone(tensorlet_wheelhouse, tmp_path):
    """`pip install .` with USE_CUDA=ON on a machine whose CUDA toolkit is hidden (bubblewrap,
    buildkit_testing.cuda): the isolated build gets nvcc from NVIDIA's wheels (cuda-toolkit =
    "auto"), and the installed libtensorlet_cuda loads libcudart from the runtime wheel."""
    if blocked := bubblewrap_unavailable():
        pytest.skip(f"the system CUDA toolkit cannot be hidden: {blocked}")
    project = copy_sources(ROOT, tmp_path / "tensorlet")
    python = make_venv(tmp_path / "venv", with_pip=False)
    env = without_system_cuda_env(python, tensorlet_wheelhouse, USE_CUDA="ON", TENSORLET_CUDA_ARCH_LIST="7.5")
    built = run(without_system_cuda([sys.executable, "-m", "pip", "--python", python, "install", "-v", project]),
                env=env)
    assert "CUDA toolkit: NVIDIA's wheels, CUDA 13." in built.stdout + built.stderr
    here = tmp_path / "elsewhere"
    here.mkdir()
    computed, mapped = run(without_system_cuda([python, "-c", MAPPED_CUDART]), cwd=here, env=env).stdout.splitlines()
    assert computed == ("6.0 False" if not GPU_PRESENT else "6.0 True")
    assert mapped == str([str(site_packages(python) / "nvidia" / "cu13" / "lib" / "libcudart.so.13")])


# USE_CUBLAS's wheel, nvidia-cublas (440 MB), and a third CUDA compile of tensorlet: torch-marked
# with the test above.
MAPPED_CUBLAS = ("import tensorlet as tl, tensorlet.config as c\n"
                 "print(c.build_info()['cublas'], tl.cuda.is_built(), tl._libraries.cuda_error)\n"
                 "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcublas' in l}))\n")


@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.cuda
def test_pip_install_with_cublas_from_its_wheel(tensorlet_wheelhouse, tmp_path):
    """USE_CUDA=ON USE_CUBLAS=ON, toolkit hidden: `pip install .` of tensorlet as it is (its
    nvidia-cublas library dependency has `when = "USE_CUDA and USE_CUBLAS and not
    USE_SYSTEM_CUBLAS"`, and [build-system] requires does not list it: the PEP 517 hook asks
    for it) compiles with nvcc from NVIDIA's wheels for sm_75, links cuBLAS from nvidia-cublas,
    and the installed tensorlet loads libcublas and libcublasLt from the venv's wheel (the
    generated loader), on a machine without a GPU too."""
    if blocked := bubblewrap_unavailable():
        pytest.skip(f"the system CUDA toolkit cannot be hidden: {blocked}")
    cuda_toolchain_wheels("nvidia-cublas>=13,<14", "nvidia-cuda-nvrtc>=13,<14")  # cuBLAS requires nvrtc
    project = copy_sources(ROOT, tmp_path / "tensorlet")
    assert "nvidia-cublas" not in project.joinpath("pyproject.toml").read_text().split("[project]")[0]
    python = make_venv(tmp_path / "venv", with_pip=False)
    env = without_system_cuda_env(python, tensorlet_wheelhouse, USE_CUDA="ON", USE_CUBLAS="ON",
                                  TENSORLET_CUDA_ARCH_LIST="7.5")
    built = run(without_system_cuda([sys.executable, "-m", "pip", "--python", python, "install", "-v", project]),
                env=env)
    assert "CUDA toolkit: NVIDIA's wheels, CUDA 13." in built.stdout + built.stderr
    site = site_packages(python)
    cuda = read_elf_dynamic((site / "tensorlet" / "lib" / "libtensorlet_cuda.so").read_bytes())
    assert "libcublas.so.13" in cuda.needed and "$ORIGIN/../../nvidia/cu13/lib" in cuda.runpath, cuda
    metadata = next(site.glob("tensorlet-*.dist-info")).joinpath("METADATA").read_text()
    requirement = next(line for line in metadata.splitlines() if line.startswith("Requires-Dist: nvidia-cublas"))
    pins = set(requirement.split(" ", 1)[1][len("nvidia-cublas"):].split(","))
    assert "==13.*" in pins and any(pin.startswith(">=13.") for pin in pins), requirement
    here = tmp_path / "elsewhere"
    here.mkdir()
    info, mapped = run(without_system_cuda([python, "-c", MAPPED_CUBLAS]), cwd=here, env=env).stdout.splitlines()
    assert info == "True True None", info
    lib = site / "nvidia" / "cu13" / "lib"
    assert mapped == str([str(lib / "libcublas.so.13"), str(lib / "libcublasLt.so.13")]), mapped


# torch 2.14.1's Linux wheel is a CUDA 13.0 build: it requires cuda-toolkit[cudart]==13.0.3, whose
# nvidia-cuda-runtime puts libcudart.so.13 where tensorlet's wheel looks for it.
TORCH_CUDA13 = "torch==2.14.1"
ONE_RUNTIME = ("import {first}, {second}\n"
               "print(sorted({{l.split()[-1] for l in open('/proc/self/maps') if 'libcudart' in l}}))\n")


@pytest.mark.torch
def test_one_cuda_runtime_beside_torch(full_build, tensorlet_wheelhouse, tmp_path):
    """tensorlet and a CUDA 13 torch in one venv, imported in either order: one libcudart,
    NVIDIA's wheel's (torch's own dependency satisfies tensorlet's requirement)."""
    if not full_build.cuda_requested:
        pytest.skip("nvcc not found: no CUDA build to package")
    python = make_venv(tmp_path / "venv", with_pip=False)
    installed = run([sys.executable, "-m", "pip", "--python", python, "install", "-q", TORCH_CUDA13,
                     full_build.wheel(), "--find-links", tensorlet_wheelhouse], check=False, timeout=1800)
    if installed.returncode != 0:
        pytest.skip(f"{TORCH_CUDA13} could not be installed: {installed.stderr.strip()[-300:]}")
    here = tmp_path / "elsewhere"
    here.mkdir()
    expected = str([str(site_packages(python) / "nvidia" / "cu13" / "lib" / "libcudart.so.13")])
    for first, second in (("torch", "tensorlet"), ("tensorlet", "torch")):
        assert run([python, "-c", ONE_RUNTIME.format(first=first, second=second)], cwd=here).stdout.strip() == expected


# ---- the kernels on a GPU, in the in-place build (USE_CUDA=ON there) --------------------
# test_opinfo.py's cuda rows check every op against NumPy over the shared samples; these
# add the paths inside the CUDA kernels that those samples do not reach.

@pytest.fixture
def cuda_or_skip():
    from test_opinfo import unavailable

    if tl is None:
        pytest.skip("tensorlet._C is not built")
    reason = unavailable("cuda")
    if reason:
        pytest.skip(f"cuda: {reason}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3, 4, 1000, 1000003])
def test_gpu_contiguous_paths(cuda_or_skip, dtype, n):
    """16-byte packs plus a tail, one-element packs for views that start off a 16-byte
    boundary, the two-pass sum, out=, in-place and device-to-device copies."""
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    cx, cy = tl.from_numpy(x).cuda(), tl.from_numpy(y).cuda()
    # atol too: the kernel computes x + alpha * y with one rounding (an FMA), NumPy with
    # two, and where x and alpha * y nearly cancel the relative difference is large.
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tl.add(cx, cy, alpha=3).cpu().numpy(), x + 3 * y, **tol)
    np.testing.assert_allclose((cx * cy).cpu().numpy(), x * y, **tol)
    np.testing.assert_allclose((cx[1:] + cy[:-1]).cpu().numpy(), x[1:] + y[:-1], **tol)
    np.testing.assert_allclose(cx[1:].sum().cpu().item(), x[1:].sum(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(cx.sum().cpu().item(), x.sum(), rtol=1e-4, atol=1e-3)
    out = tl.empty(n, device="cuda", dtype=getattr(tl, dtype))
    tl.mul(cx, cy, out=out)
    np.testing.assert_allclose(out.cpu().numpy(), x * y, **tol)
    dst = tl.empty(n, device="cuda", dtype=getattr(tl, dtype))
    assert dst.copy_(cx).cpu().numpy().tolist() == x.tolist()
    cx.add_(cy)
    np.testing.assert_allclose(cx.cpu().numpy(), x + y, **tol)
    tl.cuda.synchronize()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_strided_paths_and_fill(cuda_or_skip, dtype):
    """Transposed operands (the strided kernels), strided copies, a Python number,
    fill_, and sums over some dims of a permuted tensor."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((33, 17)).astype(dtype)
    t = tl.from_numpy(a).cuda()
    assert t.device.type == "cuda"
    np.testing.assert_allclose((t.transpose(0, 1) + t.transpose(0, 1)).cpu().numpy(), (a + a).T, rtol=1e-5)
    transposed = tl.empty((17, 33), device="cuda", dtype=getattr(tl, dtype)).copy_(t.transpose(0, 1))
    np.testing.assert_array_equal(transposed.cpu().numpy(), a.T)
    np.testing.assert_allclose((t + 1.5).cpu().numpy(), a + 1.5, rtol=1e-5)
    assert tl.zeros(4, device="cuda", dtype=getattr(tl, dtype)).fill_(3.0).cpu().tolist() == [3.0] * 4
    c = rng.standard_normal((4, 5, 6)).astype(dtype)
    cc = tl.from_numpy(c).cuda()
    np.testing.assert_allclose(cc.transpose(0, 2).sum(dim=[1]).cpu().numpy(), c.transpose(2, 1, 0).sum(axis=1),
                               rtol=1e-5, atol=1e-6)
    assert tl.zeros((3, 0), device="cuda", dtype=getattr(tl, dtype)).sum(dim=[1]).cpu().tolist() == [0.0] * 3
    tl.cuda.synchronize()
    assert tl.cuda.get_device_name()


def test_gpu_conversions(cuda_or_skip):
    """copy_ between dtypes on the device (to(), the shared layer's casts): every pair,
    against NumPy's astype. Values in [0, 10): a negative or out-of-range float has no
    defined conversion to an unsigned or narrower type in C++, nor one torch promises."""
    from opinfo import ALL

    values = np.array([0.0, 0.5, 1.0, 2.75, 9.5, 3.0, 0.25], dtype=np.float64)
    for src in ALL:
        x = values.astype(src)
        cx = tl.from_numpy(x).cuda()
        for dst in ALL:
            got = cx.to(getattr(tl, dst))
            assert got.device.type == "cuda" and got.dtype == getattr(tl, dst)
            np.testing.assert_array_equal(got.cpu().numpy(), x.astype(dst), err_msg=f"{src} -> {dst}")
        # A strided source too: the conversion kernel walks both layouts.
        np.testing.assert_array_equal(cx[::2].to(tl.float64).cpu().numpy(), x[::2].astype("float64"))
    tl.cuda.synchronize()


@pytest.mark.parametrize("dtype", ["uint8", "int32", "float32", "float64"])
def test_gpu_reductions_across_blocks(cuda_or_skip, dtype):
    """The full reductions' kernel (many blocks of 16-byte packs, a tail, and a view
    off the 16-byte boundary) with each reducer: a maximum that occurs twice (argmax: the
    first), a NaN (it wins amax and argmax), integer sums in int64, mean."""
    rng = np.random.default_rng(7)
    n = 1_000_003
    x = rng.integers(0, 100, n).astype(dtype)
    x[[12345, 777777]] = 100
    cx = tl.from_numpy(x).cuda()
    assert cx.amax().cpu().item() == 100 and cx.argmax().cpu().item() == 12345
    assert cx[1:].argmax().cpu().item() == 12344 and cx[20000:].argmax().cpu().item() == 777777 - 20000
    total = cx.sum()
    if dtype.startswith("float"):
        np.testing.assert_allclose(total.cpu().item(), x.astype(np.float64).sum(), rtol=1e-5)
        np.testing.assert_allclose(cx.mean().cpu().item(), x.astype(np.float64).mean(), rtol=1e-5)
        x[500001] = x[900000] = np.nan
        cx = tl.from_numpy(x).cuda()
        assert np.isnan(cx.amax().cpu().item()) and cx.argmax().cpu().item() == 500001
        assert cx[600000:].argmax().cpu().item() == 300000
    else:
        assert total.dtype == tl.int64 and total.cpu().item() == int(x.astype(np.int64).sum())
    tl.cuda.synchronize()


def test_gpu_full_reductions_queued_back_to_back(cuda_or_skip):
    """A full reduction is one kernel whose last block merges the blocks' partials and puts
    the device's count of finished blocks back to zero: many reductions queued without a
    synchronization between them (one block, a few, a capped grid that loops), each
    reducer's accumulator (float, a byte, int64 sums, argmax's value and index), a NaN
    in the tail and in a pack, and a row of -inf each give the host's result."""
    rng = np.random.default_rng(11)
    cases, results = [], []
    for n in (1, 5, 4097, 1_000_003, (1 << 22) + 7):
        for dtype in ("float32", "uint8", "int32", "float64", "bool"):
            x = rng.integers(0, 200, n).astype(dtype) if dtype != "bool" else rng.integers(0, 2, n).astype(bool)
            cx = tl.from_numpy(x).cuda()
            queued = [cx.sum(), cx.amax()] + ([cx.argmax()] if dtype != "bool" else [])
            cases.append((x, dtype))
            results.append(queued)  # no .cpu() yet: every kernel is queued before any is read
    for (x, dtype), queued in zip(cases, results):
        assert queued[0].cpu().item() == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-6), (dtype, x.size)
        assert queued[1].cpu().item() == x.max(), (dtype, x.size)
        if dtype != "bool":
            assert queued[2].cpu().item() == int(np.argmax(x)), (dtype, x.size)
    for where in (0, 4096, (1 << 22) + 6):  # a pack of the first block, a later one, the tail
        x = np.full((1 << 22) + 7, -np.inf, dtype="float32")
        assert tl.from_numpy(x).cuda().amax().cpu().item() == -np.inf
        x[where] = np.nan
        assert np.isnan(tl.from_numpy(x).cuda().amax().cpu().item()), where
    tl.cuda.synchronize()


def test_gpu_where(cuda_or_skip):
    """where on the device (gradients of relu and maximum use it): a broadcast condition,
    operands of two dtypes (promoted), a non-contiguous operand and a Python number."""
    rng = np.random.default_rng(3)
    cond = rng.random((3, 1)) > 0.5
    a = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    b = rng.standard_normal(4)
    cc, ca, cb = tl.from_numpy(cond).cuda(), tl.from_numpy(a).cuda(), tl.from_numpy(b).cuda()
    got = tl.where(cc, ca, cb)
    assert got.dtype == tl.float64 and got.device.type == "cuda"
    np.testing.assert_array_equal(got.cpu().numpy(), np.where(cond, a, b))
    np.testing.assert_array_equal(tl.where(cc, ca.transpose(0, 1).contiguous().transpose(0, 1), 0.5).cpu().numpy(),
                                  np.where(cond, a, 0.5).astype(np.float32))
    tl.cuda.synchronize()


# ---- arange, rand, randn, softmax on the GPU --------------------------------------------
# rand and randn draw from Philox4x32-10 (csrc/ops/Philox.h): written out again here in
# Python, checked against Random123's published known-answer vectors, and against the
# header compiled for the host, so the device's numbers are checked bit for bit without
# trusting either copy alone.
MASK32 = 0xFFFFFFFF
PHILOX_KAT = [  # Random123's tests/kat_vectors: (counter, key, result)
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK32,) * 4, (MASK32,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
PHILOX_HOST_PROGRAM = r"""
#include <cstdio>
#include "ops/Philox.h"
int main() {
  unsigned c[4], k[2];
  while (std::scanf("%x %x %x %x %x %x", &c[0], &c[1], &c[2], &c[3], &k[0], &k[1]) == 6) {
    tensorlet::Philox4x32 r = tensorlet::philox4x32_10({{c[0], c[1], c[2], c[3]}}, k[0], k[1]);
    std::printf("%x %x %x %x\n", r.v[0], r.v[1], r.v[2], r.v[3]);
  }
}
"""


def philox4x32_10(counter, key) -> tuple:
    c, (k0, k1) = list(counter), key
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & MASK32, (p0 >> 32) ^ c[3] ^ k1, p0 & MASK32]
    return tuple(c)


def philox_words(seed: int, first: int, counters: int) -> np.ndarray:
    """[counters, 4] words of counters first, first + 1, ... under `seed` (Philox.h's philox_at)."""
    key = (seed & MASK32, seed >> 32)
    return np.array([philox4x32_10(((first + i) & MASK32, (first + i) >> 32, 0, 0), key)
                     for i in range(counters)], dtype=np.uint64)


def expected_uniforms(seed: int, first: int, n: int, dtype: str, open0: bool = False) -> np.ndarray:
    """rand's values (open0: the (0, 1] uniforms randn starts from), in float64."""
    if dtype == "float32":
        w = philox_words(seed, first, -(-n // 4)).reshape(-1)
        return ((w >> np.uint64(8)) + np.uint64(open0)).astype(np.float64)[:n] * 2.0 ** -24
    w = philox_words(seed, first, -(-n // 2)).reshape(-1, 2)
    bits = ((w[:, 0] << np.uint64(32)) | w[:, 1]) >> np.uint64(11)
    return (bits + np.uint64(open0)).astype(np.float64)[:n] * 2.0 ** -53


def test_philox_reference_matches_random123():
    for counter, key, result in PHILOX_KAT:
        assert philox4x32_10(counter, key) == result


def test_philox_header_matches_random123(tmp_path):
    """ops/Philox.h compiled for the host (TL_HOST_DEVICE is empty there) gives the vectors."""
    source = tmp_path / "philox.cpp"
    source.write_text(PHILOX_HOST_PROGRAM)
    exe = tmp_path / "philox"
    run([os.environ.get("CXX", "g++"), "-std=c++20", "-O2", "-I", ROOT / "csrc", source, "-o", exe])
    lines = "".join(" ".join(f"{v:x}" for v in (*counter, *key)) + "\n" for counter, key, _ in PHILOX_KAT)
    out = subprocess.run([exe], input=lines, capture_output=True, text=True, check=True).stdout.split("\n")
    assert [tuple(int(v, 16) for v in line.split()) for line in out if line] == [r for _, _, r in PHILOX_KAT]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_rand_randn_are_the_philox_stream(cuda_or_skip, dtype):
    """rand after manual_seed(s): Philox's counters 0, 1, ... under key s, bit for bit; the next
    call continues the stream; randn is Box-Muller of the same words; a seed repeats it."""
    seed, n, m = 1234567890123, 1001, 37
    per_counter = 4 if dtype == "float32" else 2
    tl.manual_seed(seed)
    a = tl.rand(n, dtype=getattr(tl, dtype), device="cuda").cpu().numpy()
    b = tl.rand(m, dtype=getattr(tl, dtype), device="cuda").cpu().numpy()
    assert a.dtype == np.dtype(dtype) and a.shape == (n,)
    np.testing.assert_array_equal(a.astype(np.float64), expected_uniforms(seed, 0, n, dtype))
    np.testing.assert_array_equal(b.astype(np.float64), expected_uniforms(seed, -(-n // per_counter), m, dtype))
    tl.manual_seed(seed)
    np.testing.assert_array_equal(tl.rand(n, dtype=getattr(tl, dtype), device="cuda").cpu().numpy(), a)

    tl.manual_seed(seed)
    z = tl.randn(n, dtype=getattr(tl, dtype), device="cuda").cpu().numpy()
    pairs = -(-n // 2)
    if dtype == "float32":  # words 2p (a (0, 1] uniform) and 2p + 1 of each counter make a pair
        w = philox_words(seed, 0, -(-n // 4)).reshape(-1, 2, 2)
        u_open0 = ((w[..., 0] >> np.uint64(8)) + np.uint64(1)).astype(np.float64).reshape(-1) * 2.0 ** -24
        u = (w[..., 1] >> np.uint64(8)).astype(np.float64).reshape(-1) * 2.0 ** -24
        tol = dict(rtol=2e-5, atol=2e-5)
    else:
        w = philox_words(seed, 0, pairs)
        u_open0 = ((((w[:, 0] << np.uint64(32)) | w[:, 1]) >> np.uint64(11)) + np.uint64(1)).astype(np.float64)
        u_open0 *= 2.0 ** -53
        u = (((w[:, 2] << np.uint64(32)) | w[:, 3]) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
        tol = dict(rtol=1e-12, atol=1e-12)
    r = np.sqrt(-2 * np.log(u_open0))
    want = np.stack([r * np.cos(2 * np.pi * u), r * np.sin(2 * np.pi * u)], axis=-1).reshape(-1)[:n]
    np.testing.assert_allclose(z.astype(np.float64), want, **tol)
    big = tl.randn(1 << 20, dtype=getattr(tl, dtype), device="cuda").cpu().numpy()
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1) < 0.01
    assert tl.rand(0, device="cuda").numel() == 0 and tl.randn((2, 0, 3), device="cuda").shape == (2, 0, 3)
    with pytest.raises(RuntimeError, match="not implemented for 'int64'"):
        tl.rand(3, dtype=tl.int64, device="cuda")
    tl.cuda.synchronize()


ARANGE_CASES = [((5,), {}), ((0, 1, 0.25), {}), ((2, -7, -3), {}), ((1.0, 3.0), {}), ((0, 10**6 + 7), {}),
                ((0.1, 2.3, 0.1), {}), ((-3, 40, 2), {"dtype": "uint8"}),
                ((0, 1, 0.1), {"dtype": "float64"}), ((5, 200, 7), {"dtype": "int32"}), ((4, 4), {})]


def test_gpu_arange_is_the_cpus(cuda_or_skip):
    """The same dtype, element count and values (bit for bit) as the CPU's arange."""
    for args, dtype in ARANGE_CASES:
        kw = {k: getattr(tl, v) for k, v in dtype.items()}
        cpu, gpu = tl.arange(*args, **kw), tl.arange(*args, **kw, device="cuda")
        assert gpu.device.type == "cuda" and (gpu.dtype, gpu.shape) == (cpu.dtype, cpu.shape), args
        np.testing.assert_array_equal(gpu.cpu().numpy(), cpu.numpy(), err_msg=str(args))
    with pytest.raises(ValueError, match="step must be nonzero"):
        tl.arange(0, 3, 0, device="cuda")
    with pytest.raises(RuntimeError, match="not implemented for 'bool'"):  # as torch refuses it
        tl.arange(0, 3, dtype=tl.bool, device="cuda")
    tl.cuda.synchronize()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_softmax_rows_and_special_values(cuda_or_skip, dtype):
    """Both kernels (a warp per row, a block per row past 1024), many rows, large values
    (stability), -inf, a NaN row, and dtype=: the CPU kernel's results."""
    rng = np.random.default_rng(3)
    for shape, dim in (((5000, 7), 1), ((3, 1025), 1), ((2, 70000), -1), ((40, 3, 50), 0)):
        a = rng.uniform(-50, 50, shape).astype(dtype) * 20
        for name in ("softmax", "log_softmax"):
            got = getattr(tl, name)(tl.from_numpy(a).cuda(), dim).cpu().numpy()
            want = getattr(tl, name)(tl.from_numpy(a), dim).numpy()
            tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(got, want, err_msg=f"{name} {shape} {dim}", **tol)
    s = np.ones((3, 9), dtype=dtype)
    s[0, 4], s[1, :] = np.nan, -np.inf
    s[2, 0] = -np.inf
    got = tl.from_numpy(s).cuda().softmax(1).cpu().numpy()
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all() and got[2, 0] == 0 and np.allclose(got[2, 1:], 1 / 8)
    i = tl.arange(6, device="cuda").view(2, 3)
    assert i.softmax(1, dtype=getattr(tl, dtype)).dtype == getattr(tl, dtype)
    with pytest.raises(RuntimeError, match="not implemented for 'int64'"):
        i.softmax(1)
    tl.cuda.synchronize()


def test_gpu_layouts_past_eight_dims(cuda_or_skip):
    """The strided kernels walk the shared LoopPlan: 12 dims that no two merge (a reversed
    permutation) run, as do 12 size-2 dims of contiguous operands that coalesce into one;
    before, CUDA refused anything over 8 dims."""
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((2,) * 12).astype("float32"), rng.standard_normal((2,) * 12).astype("float32")
    ta, tb = tl.from_numpy(a).cuda(), tl.from_numpy(b).cuda()
    dims = list(range(11, -1, -1))
    np.testing.assert_allclose((ta.permute(*dims) + tb).cpu().numpy(), a.transpose(dims) + b, rtol=1e-6)
    np.testing.assert_allclose((ta * tb).cpu().numpy(), a * b, rtol=1e-6)
    moved = tl.empty((2,) * 12, device="cuda").copy_(ta.permute(*dims))
    np.testing.assert_array_equal(moved.cpu().numpy(), a.transpose(dims))
    tl.cuda.synchronize()
