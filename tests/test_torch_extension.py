"""Real torch extensions (tests/packages/torch_ext: a pybind11-style module and a
TORCH_LIBRARY op library, both from cmake/BuildkitTorch.cmake's buildkit_torch_extension),
built into a wheel without build isolation in a fresh venv that has torch, installed, and
run against torch; and the same project configured against a CUDA build of torch.

Selected with `pytest -m torch` only (pyproject.toml's addopts deselect the marker).  Each
test runs twice: against the newest torch on the package index (today torch 2.15, a CUDA
13.2 build: about 3 GB with NVIDIA's wheels, a few minutes to install), so that an upstream
change shows up here before a user meets it, and against one pinned older release (2.13,
a 190 MB CPU build).  A machine-wide pip constraint that caps torch (a local mirror's) is
lifted for the newest row, which checks that it got the index's newest version.  Where pip
cannot install a row it is skipped with the reason.  The CUDA tests also need nvcc.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from buildkit.builder.configure.torch_env import cuda_version
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.cuda import (
    bubblewrap_unavailable,
    cuda_toolkit_root,
    find_nvcc,
    needs_nvcc,
    without_system_cuda,
    without_system_cuda_env,
)
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.torch_venvs import PINNED_TORCH, public_version, wheel_without_isolation
from buildkit_testing.venvs import pip_into, site_packages

pytestmark = [pytest.mark.torch, pytest.mark.slow]

CHECK = """
import torch, torchext
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
assert torch.equal(torchext.add_one(x), x + 1), torchext.add_one(x)
assert torch.equal(torchext.scale(x, 2.5), x * 2.5), torchext.scale(x, 2.5)
assert torch.equal(torch.ops.torchext.scale(x, -1.0), -x)
print(torchext.cxx_standard)
"""


@pytest.fixture
def torch_venv(torch_python: Path) -> Path:
    return torch_python


def test_torch_extensions_build_into_a_wheel_that_runs_against_torch(
        test_package: Callable[..., Path], torch_venv: Path, wheelhouse: Path, tmp_path: Path) -> None:
    project = test_package("torch_ext")
    wheel = wheel_without_isolation(torch_venv, wheelhouse, project, tmp_path / "dist")
    pip_into(torch_venv, wheelhouse, "install", "-q", "--no-deps", wheel)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    standard = run([torch_venv, "-c", CHECK], cwd=elsewhere, env=clean_env()).stdout.split()[-1]
    assert int(standard) >= 202002, f"torch 2.13 and later ask for C++20, the module saw {standard}"

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("torchext/_C.") for n in names) and "torchext/libtorchext_ops.so" in names, names
    bundled = [n for n in names if n.rsplit("/", 1)[-1].startswith(("libtorch", "libc10"))
               and "torchext_ops" not in n]
    assert not bundled, f"torch's own libraries were put into the wheel: {bundled}"
    metadata = zipfile.ZipFile(wheel).read("torchext-0.1.0.dist-info/METADATA").decode()
    assert f"Requires-Dist: torch=={public_version(torch_venv, 'torch')}" in metadata.splitlines(), metadata


# The CPU wheel's CMake config with its CUDA switches on is what a CUDA build of torch
# ships: Caffe2Config.cmake runs public/cuda.cmake (find_package(CUDA), torch's own
# -gencode list, CMAKE_CUDA_ARCHITECTURES set OFF, CUDA_nvrtc_LIBRARY) and stops without
# a toolkit; TorchConfig.cmake appends NVRTC and c10_cuda to TORCH_LIBRARIES.
CUDA_BUILD_SWITCHES = {
    "Caffe2/Caffe2Config.cmake": [
        ("if(0)\n  # The file public/cuda.cmake", "if(1)\n  # The file public/cuda.cmake"),
        ("set(CAFFE2_USE_CUDA 0)", "set(CAFFE2_USE_CUDA 1)"),
        ("if( AND NOT CAFFE2_USE_CUDA)", "if(1 AND NOT CAFFE2_USE_CUDA)"),
    ],
    "Torch/TorchConfig.cmake": [
        ("if(0)\n  if(MSVC)\n    find_library(CAFFE2_NVRTC", "if(1)\n  if(MSVC)\n    find_library(CAFFE2_NVRTC"),
    ],
}


def cuda_build_of_torch(torch_venv: Path, where: Path) -> str:
    """A torch prefix whose CMake config is a CUDA build's (its headers and libraries are the
    CPU wheel's); returns the CMake arguments that select it.  Caffe2_DIR too: the
    library-dependencies entry sets Torch_ROOT to the installed torch, and TorchConfig's
    find_package(Caffe2) searches an enclosing package's root before its own PATHS."""
    torch = site_packages(torch_venv) / "torch"
    prefix = where / "torch"
    prefix.mkdir(parents=True)
    for folder in ("include", "lib"):
        (prefix / folder).symlink_to(torch / folder)
    shutil.copytree(torch / "share", prefix / "share")
    for name, switches in CUDA_BUILD_SWITCHES.items():
        config = prefix / "share" / "cmake" / name
        text = config.read_text()
        for cpu, cuda in switches:
            assert text.count(cpu) == 1, f"{name} of torch {PINNED_TORCH} no longer reads {cpu!r}"
            text = text.replace(cpu, cuda)
        config.write_text(text)
    cmake = prefix / "share" / "cmake"
    return f"-DTorch_DIR={cmake / 'Torch'} -DCaffe2_DIR={cmake / 'Caffe2'}"


def configure(torch_venv: Path, project: Path, **variables: str) -> str:
    """Configure only (CMAKE_ONLY=1); the configure log."""
    run([torch_venv, "-m", "buildkit", "build", project], cwd=project, env=clean_env(CMAKE_ONLY="1", **variables))
    return (build_folder(project) / ".buildkit" / "logs" / "configure.log").read_text()


@needs_nvcc
@pytest.mark.cuda
def test_against_a_cuda_build_of_torch(test_package: Callable[..., Path], torch_venv: Path,
                                       tmp_path: Path) -> None:
    toolkit = cuda_toolkit_root()
    installed = site_packages(torch_venv) / "torch"
    real_cuda_build = cuda_version(installed) is not None
    # The newest torch on the index is a CUDA build: its own config, and a real build whose
    # .cu file includes ATen (which stops below C++20, under nvcc too). The pinned CPU wheel
    # gets a CUDA build's config made from its own, and is only configured.
    cuda_torch = "" if real_cuda_build else cuda_build_of_torch(torch_venv, tmp_path / "cuda-torch")

    # CUDA: torch's config adds its "Common" list (sm_50, which CUDA 13 rejects, and
    # more) and turns CMAKE_CUDA_ARCHITECTURES off; the targets keep buildkit's list.
    # This toolkit has no NVRTC: its NOTFOUND library is not linked.
    cuda = test_package("torch_ext", tmp_path / "cuda" / "torch_ext")
    arguments = f"{cuda_torch} -DCUDA_TOOLKIT_ROOT_DIR={toolkit} -DTORCHEXT_WITH_CUDA=ON"
    log = configure(torch_venv, cuda, TORCHEXT_CUDA_ARCH_LIST="7.5", CUDACXX=find_nvcc(), CMAKE_ARGS=arguments)
    assert "arch=compute_50,code=sm_50" in log and "CUDA ON" in log and ": CUDA ON, C++20" in log, log
    ninja = (build_folder(cuda) / "build.ninja").read_text()
    assert "sm_75" in ninja and "sm_50" not in ninja and "compute_50" not in ninja
    assert "NOTFOUND" not in ninja
    assert "CUDA_nvrtc_LIBRARY-NOTFOUND" in (build_folder(cuda) / "CMakeCache.txt").read_text()
    # torch's config states no CUDA standard; nvcc gets the C++ one all the same.
    twice = ninja[ninja.index("csrc/twice.cu.o:"):]
    assert "-std=c++20" in twice[:twice.index("\nbuild ")], twice[:2000]
    flags = [line for line in twice[:twice.index("\nbuild ")].splitlines() if line.strip().startswith("FLAGS =")]
    assert flags and "cmake_pch" not in flags[0], f"nvcc was given the C++ precompiled header: {flags}"
    if real_cuda_build:
        run([torch_venv, "-m", "buildkit", "build", cuda], cwd=cuda,
            env=clean_env(TORCHEXT_CUDA_ARCH_LIST="7.5", CUDACXX=find_nvcc(), CMAKE_ARGS=arguments))
        assert list(build_folder(cuda).glob("CMakeFiles/torchext_ops.dir/csrc/twice.cu.o"))

    # CPU only: torch's CMake config is not run, so no toolkit is looked for at all.
    cpu = test_package("torch_ext", tmp_path / "cpu" / "torch_ext")
    log = configure(torch_venv, cpu, CMAKE_ARGS=f"{cuda_torch} -DCUDA_TOOLKIT_ROOT_DIR=/nonexistent")
    assert "CUDA OFF" in log and "PyTorch: CUDA" not in log, log


@needs_nvcc
@pytest.mark.cuda
@pytest.mark.skipif(bubblewrap_unavailable() is not None, reason=f"the system CUDA toolkit cannot be hidden: "
                                                                f"{bubblewrap_unavailable()}")
def test_an_isolated_wheel_of_a_cuda_extension_with_no_system_toolkit(
        test_package: Callable[..., Path], torch_venv: Path, wheelhouse: Path, tmp_path: Path) -> None:
    """`pip wheel` (isolated) of torch_ext with its CUDA kernel against a CUDA build of torch, the
    machine's toolkit hidden (bubblewrap): the build environment gets NVIDIA's toolchain wheels
    of torch's CUDA release. Before, with torch 2.14.1 (CUDA 13.0) it stopped four times: nvcc
    13.0's profile looks for lib64 (the mirror links it); pip put the newest runtime beside nvcc
    and torch's config refused its headers (the toolkit takes torch's, of nvcc's release); and,
    with a machine CMake before 3.25.2 (Debian 12's), the precompiled headers' REUSE_FROM and
    CUDA C++20. The wheel installs beside torch (its runtime floor is not above torch's CUDA)
    and runs."""
    cuda = cuda_version(site_packages(torch_venv) / "torch")
    if cuda is None:
        pytest.skip("a CPU build of torch: no toolchain wheels to build against")
    major, minor = cuda.split(".")[:2]
    constraints = tmp_path / "constraints.txt"  # the build environment's torch: the venv's
    constraints.write_text(f"torch=={public_version(torch_venv, 'torch')}\n")
    project = test_package("torch_ext")
    env = {**without_system_cuda_env(torch_venv, wheelhouse, PIP_CONSTRAINT=str(constraints),
                                     CMAKE_ARGS="-DTORCHEXT_WITH_CUDA=ON", TORCHEXT_CUDA_ARCH_LIST="7.5"),
           "PIP_NO_INDEX": "0"}  # the build environment's torch comes from the index (pip's cache)
    built = run(without_system_cuda([sys.executable, "-m", "pip", "--python", torch_venv, "wheel", "-v", "--no-deps",
                                     "-w", tmp_path / "dist", project]), env=env, timeout=3600)
    said = " ".join((built.stdout + built.stderr).split())
    assert f"CUDA toolkit: NVIDIA's wheels, CUDA {major}.{minor} at" in said, said[-3000:]
    wheel = only_wheel(tmp_path / "dist")
    metadata = zipfile.ZipFile(wheel).read("torchext-0.1.0.dist-info/METADATA").decode()
    floor = re.search(rf"^Requires-Dist: nvidia-cuda-runtime=={major}\.\*,>={major}\.(\d+)$", metadata, re.M)
    assert floor is not None and int(floor[1]) <= int(minor), metadata
    pip_into(torch_venv, wheelhouse, "install", "-q", wheel)  # with its requirements: torch's own satisfy them
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run([torch_venv, "-c", CHECK], cwd=elsewhere, env=clean_env())


def ninja_would_run(torch_venv: Path, build: Path) -> str:
    """The steps a build of ``build`` would run now (``ninja -n``), one per line."""
    return run([torch_venv.parent / "ninja", "-C", build, "-n"]).stdout


def compile_commands(build: Path) -> dict[str, str]:
    return {Path(c["file"]).name: c["command"] for c in json.loads((build / "compile_commands.json").read_text())}


def test_precompiled_torch_headers(test_package: Callable[..., Path], torch_venv: Path, tmp_path: Path) -> None:
    project = test_package("torch_ext", tmp_path / "torch_ext")
    build = build_folder(project, torch_venv)
    run([torch_venv, "-m", "buildkit", "build", project], cwd=project, env=clean_env())
    commands = compile_commands(build)
    for source, target in (("add_one.cpp", "torchext_C"), ("ops.cpp", "torchext_ops")):
        assert f"{target}.dir/cmake_pch.hxx" in commands[source], commands[source]
        assert (build / "CMakeFiles" / f"{target}.dir" / "cmake_pch.hxx.gch").is_file()
    assert "torch/extension.h" in (build / "CMakeFiles" / "torchext_C.dir" / "cmake_pch.hxx").read_text()
    assert "no work to do" in ninja_would_run(torch_venv, build)

    # A changed torch header (in both precompiled headers), as pip changes torch in an upgrade:
    # the file replaced and the distribution's metadata folder written anew, which is what
    # buildkit's no-op record and its mirror of torch watch (site-packages' mtime, then the
    # files' bytes). Each precompiled header is rebuilt, then every C++ object.
    steps = [build / "CMakeFiles" / f"{target}.dir" / name for target, name in (
        ("torchext_C", "cmake_pch.hxx.gch"), ("torchext_ops", "cmake_pch.hxx.gch"),
        ("torchext_C", "csrc/add_one.cpp.o"), ("torchext_ops", "csrc/ops.cpp.o"))]
    before = {step: step.stat().st_mtime_ns for step in steps}
    header = site_packages(torch_venv) / "torch" / "include" / "ATen" / "ATen.h"
    replacement = header.with_name("ATen.h.new")
    replacement.write_text(header.read_text() + "\n// changed by test_precompiled_torch_headers\n")
    replacement.replace(header)
    metadata = next(site_packages(torch_venv).glob("torch-*.dist-info"))
    metadata.rename(metadata.with_name("reinstalling"))
    metadata.with_name("reinstalling").rename(metadata)
    run([torch_venv, "-m", "buildkit", "build", project], cwd=project, env=clean_env())
    stale = [str(step) for step in steps if step.stat().st_mtime_ns == before[step]]
    assert not stale, f"not rebuilt after a torch header changed: {stale}"
    # A changed flag: the same.
    configure(torch_venv, project, CMAKE_ARGS="-DCMAKE_CXX_FLAGS=-DTORCHEXT_PROBE=1")
    assert "-DTORCHEXT_PROBE=1" in compile_commands(build)["add_one.cpp"]
    pending = ninja_would_run(torch_venv, build)
    assert "torchext_C.dir/cmake_pch.hxx.gch" in pending and "add_one.cpp.o" in pending, pending

    # Switched off: no precompiled header, the module still builds and runs.
    run([torch_venv, "-m", "buildkit", "develop", project], cwd=project, env=clean_env(BUILDKIT_TORCH_PCH="0"))
    assert "cmake_pch" not in compile_commands(build)["add_one.cpp"]
    assert "BUILDKIT_TORCH_PCH:UNINITIALIZED=OFF" in (build / "CMakeCache.txt").read_text()
    run([torch_venv, "-c", CHECK], cwd=project / "src", env=clean_env())
