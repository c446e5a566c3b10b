from __future__ import annotations

import pytest

from buildkit.builder.configure.configure_state import diff_inputs
from buildkit.builder.driver import CMakeDriver
from buildkit.builder.toolchain.cuda_arch import (
    architecture_numbers,
    gpu_detected,
    minimum_arch_for_cuda,
    normalize_cuda_architectures,
)
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit.errors import ConfigError
from buildkit_testing.projects import write_pyproject


@pytest.mark.parametrize("value, expected", [
    # PyTorch form: real code each, PTX for the newest only, +PTX adds it.
    ("7.5;8.0;9.0", "75-real;80-real;90"),
    ("7.5 8.0 9.0", "75-real;80-real;90"),
    ("8.6 9.0", "86-real;90"),
    ("9.0+PTX", "90"),
    ("7.5+PTX;8.6", "75;86"),
    ("8.0;7.5", "75-real;80"),
    ("8.0,8.6", "80-real;86"),
    ("8.0;8.0+PTX", "80"),
    ("9.0a", "90a"),
    ("8.9;9.0a", "89-real;90a"),
    ("10.0;12.0", "100-real;120"),
    # Names.
    ("Turing", "75"),
    ("Ampere", "80-real;86"),
    ("turing hopper", "75-real;90"),
    # CMake form keeps its exact meaning.
    ("75-real;80-real;90", "75-real;80-real;90"),
    ("90-virtual", "90-virtual"),
    ("75-real;80-real", "75-real;80-real"),
    ("90", "90"),
    ("all", "all"),
    ("all-major", "all-major"),
    ("ALL", "all"),
    # Empty: the project default.
    (None, "75-real;80-real;90"),
    ("", "75-real;80-real;90"),
    ("  ", "75-real;80-real;90"),
])
def test_normalize(value: str | None, expected: str) -> None:
    assert normalize_cuda_architectures(value, gpu_present=False) == expected


@pytest.mark.parametrize("value, words", [
    ("6.0;7.5", ["MY_ARCHS", "sm_60", "sm_75"]),
    ("7.0", ["sm_70", "sm_75"]),
    ("Volta", ["sm_70"]),
    ("52-real", ["sm_52"]),
    ("8.0;banana", ["MY_ARCHS", "`banana`", "7.5;8.0;9.0+PTX"]),
    ("8.0-real", ["`8.0-real`"]),
    ("sm_80", ["`sm_80`"]),
    ("all;8.0", ["`all`", "on its own"]),
    ("native", ["MY_ARCHS=native", "List the architectures"]),
])
def test_invalid(value: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        normalize_cuda_architectures(value, gpu_present=False, variable="MY_ARCHS")
    for word in words:
        assert word in str(info.value)


def test_native_with_a_gpu() -> None:
    assert normalize_cuda_architectures("native", gpu_present=True) == "native"


def test_native_detects_the_gpu() -> None:
    if gpu_detected():
        assert normalize_cuda_architectures("native") == "native"
    else:
        with pytest.raises(ConfigError):
            normalize_cuda_architectures("native")


def test_default_and_minimum_are_parameters() -> None:
    assert normalize_cuda_architectures(None, default="8.0") == "80"
    assert normalize_cuda_architectures("5.2;6.1", minimum=50) == "52-real;61"
    with pytest.raises(ConfigError, match="project default"):
        normalize_cuda_architectures(None, default="6.0")


@pytest.mark.parametrize("version, minimum", [("13.0", 75), ("12.4", 50), ("11.8", 35), (None, 75), ("junk", 75)])
def test_minimum_arch_for_cuda(version: str | None, minimum: int) -> None:
    assert minimum_arch_for_cuda(version) == minimum


@pytest.mark.parametrize("normalized, numbers", [
    ("75-real;80-real;90", ["75", "80", "90"]), ("90a;100-virtual", ["90a", "100"]), ("all", []), ("native", []),
])
def test_architecture_numbers(normalized: str, numbers: list[str]) -> None:
    assert architecture_numbers(normalized) == numbers


# TORCH_CUDA_ARCH_LIST keeps PyTorch's meaning: SASS only unless +PTX (or a family name) asks.
@pytest.mark.parametrize("value, expected", [
    ("8.0", "80-real"),
    ("7.5;8.0;9.0", "75-real;80-real;90-real"),
    ("8.6 9.0+PTX", "86-real;90"),
    ("9.0a", "90a-real"),
    ("Ampere", "80-real;86"),  # PyTorch: Ampere is 8.0;8.6+PTX
    ("Turing;8.0", "75;80-real"),  # PyTorch: Turing is 7.5+PTX
    ("75-real;90", "75-real;90"),  # CMake form: exact either way
    ("6.0;7.0", "60-real;70-real"),  # below CUDA 13's floor: nvcc, not buildkit, refuses it
])
def test_torch_cuda_arch_list_keeps_pytorchs_meaning(value: str, expected: str) -> None:
    assert normalize_cuda_architectures(value, gpu_present=False, pytorch_exact=True) == expected


def test_torch_cuda_arch_list_still_rejects_what_pytorch_rejects() -> None:
    with pytest.raises(ConfigError, match="TORCH_CUDA_ARCH_LIST='8.0;banana'"):
        normalize_cuda_architectures("8.0;banana", variable="TORCH_CUDA_ARCH_LIST", pytorch_exact=True)
    with pytest.raises(ConfigError, match="sm_30 .* but PyTorch builds for sm_35"):
        normalize_cuda_architectures("3.0", variable="TORCH_CUDA_ARCH_LIST", pytorch_exact=True)


def options_for(tmp_path, environ: dict[str, str], table: str = ""):
    settings = load_settings(write_pyproject(tmp_path, table), option_keys())
    return settings, load_options(settings, environ)


@pytest.mark.parametrize("environ, table, expected", [
    ({}, "", None),
    ({"TORCH_CUDA_ARCH_LIST": "8.0"}, "", ("8.0", "TORCH_CUDA_ARCH_LIST", True)),
    # The project's own variable wins; a [tool.buildkit] default loses to the variable.
    ({"TORCH_CUDA_ARCH_LIST": "8.0", "DEMO_CUDA_ARCH_LIST": "9.0"}, "", ("9.0", "DEMO_CUDA_ARCH_LIST", False)),
    ({"TORCH_CUDA_ARCH_LIST": "8.0"}, 'cuda-arch-list = "9.0"', ("8.0", "TORCH_CUDA_ARCH_LIST", True)),
    ({}, 'cuda-arch-list = "9.0"', ("9.0", "DEMO_CUDA_ARCH_LIST", False)),
])
def test_which_list_is_used(tmp_path, environ, table, expected) -> None:
    _, options = options_for(tmp_path, environ, table)
    request = options.cuda_architecture_request()
    assert (request and (request.value, request.variable, request.pytorch_exact)) == expected


def test_torch_cuda_arch_list_is_a_configure_input(tmp_path) -> None:
    """The driver passes the normalized list to CMake and records it: a change reconfigures."""
    settings, options = options_for(tmp_path, {"TORCH_CUDA_ARCH_LIST": "8.0;9.0"})
    driver = CMakeDriver(settings, options, install_prefix=tmp_path / "demo")
    assert driver.configure_inputs(None, "Release")["CUDA architectures"] == "80-real;90-real"
    _, changed = options_for(tmp_path, {"TORCH_CUDA_ARCH_LIST": "8.0;9.0+PTX"})
    after = CMakeDriver(settings, changed, install_prefix=tmp_path / "demo").configure_inputs(None, "Release")
    assert diff_inputs(driver.configure_inputs(None, "Release"), after) == [
        ("CUDA architectures", "CUDA architectures changed: '80-real;90-real' → '80-real;90'")]
