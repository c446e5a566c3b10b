"""cmake/BuildkitTorch.cmake reads the C++ standard torch requires from the text of its
TorchConfig.cmake, in each spelling torch has used, run by real cmake in script mode.

The lines below are the shapes of the statements in torch's configs (not copies of them):
up to torch 2.14 a ``CXX_STANDARD n`` property on its ``torch`` target (14 in 1.x, 17 in
2.0-2.12, 20 in 2.13/2.14), from 2.15 the compile feature ``cxx_std_20`` with a
``-std=c++20`` (``/std:c++20`` for MSVC) flag as the fallback for compilers CMake does not
know.  The torch-marked tests build against the newest torch and a pinned older one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from buildkit._util.resources import cmake_dir
from buildkit.builder.toolchain.tools import find_cmake

PROPERTY_MULTILINE = """
set_target_properties(torch PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
    CXX_STANDARD {n}
)
"""
PROPERTY_ONE_LINE = 'set_property(TARGET torch PROPERTY CXX_STANDARD "{n}")\n'
COMPILE_FEATURE = """
# CMake only reports compile features after CXX has been enabled; forcing C++11 is wrong.
if(CMAKE_CXX_COMPILER_LOADED)
  if("cxx_std_{n}" IN_LIST CMAKE_CXX_COMPILE_FEATURES)
    target_compile_features(torch INTERFACE cxx_std_{n})
  else()
    message(STATUS "The compiler does not report cxx_std_{n}; forcing C++{n}.")
    if(MSVC)
      set_property(TARGET torch APPEND PROPERTY INTERFACE_COMPILE_OPTIONS "$<$<COMPILE_LANGUAGE:CXX>:/std:c++{n}>")
    else()
      set_property(TARGET torch APPEND PROPERTY INTERFACE_COMPILE_OPTIONS "$<$<COMPILE_LANGUAGE:CXX>:-std=c++{n}>")
    endif()
  endif()
endif()
"""
FLAG_ONLY = 'set_property(TARGET torch PROPERTY INTERFACE_COMPILE_OPTIONS "-std=gnu++{n}")\n'


def spelled(template: str, standard: int) -> str:
    return template.replace("{n}", str(standard))


def torch_standard(tmp_path: Path, config: str, override: str | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "TorchConfig.cmake").write_text(config)
    script = tmp_path / "read.cmake"
    script.write_text(
        f'include("{cmake_dir().as_posix()}/BuildkitTorch.cmake")\n'
        + (f"set(BUILDKIT_TORCH_CXX_STANDARD {override})\n" if override else "")
        + f'file(READ "{(tmp_path / "TorchConfig.cmake").as_posix()}" config)\n'
        + '_buildkit_torch_cxx_standard(standard "${config}")\n'
        + 'message(STATUS "standard=[${standard}]")\n')
    return subprocess.run([str(find_cmake().path), "-P", str(script)],
                          check=False, capture_output=True, text=True)


@pytest.mark.parametrize("config, standard", [
    (spelled(PROPERTY_MULTILINE, 14), "14"),
    (spelled(PROPERTY_MULTILINE, 17), "17"),
    (spelled(PROPERTY_MULTILINE, 20), "20"),
    (spelled(PROPERTY_ONE_LINE, 17), "17"),
    (spelled(COMPILE_FEATURE, 20), "20"),
    (spelled(COMPILE_FEATURE, 23), "23"),
    (spelled(FLAG_ONLY, 20), "20"),
    # A config naming two (a property kept beside a newer feature): the higher one.
    (spelled(PROPERTY_MULTILINE, 17) + spelled(COMPILE_FEATURE, 20), "20"),
    # Only comments name a standard: none is named.
    ("# torch needs C++20 (cxx_std_20, -std=c++20)\nset(TORCH_FOUND 1)\n", ""),
    ("set(TORCH_FOUND 1)\n", ""),
], ids=["property-14", "property-17", "property-20", "set_property-17", "feature-20", "feature-23",
        "flag-only", "property-and-feature", "comments-only", "none"])
def test_each_spelling_torch_has_used(tmp_path: Path, config: str, standard: str) -> None:
    result = torch_standard(tmp_path, config)
    assert result.returncode == 0, result.stderr
    assert f"standard=[{standard}]" in result.stdout, result.stdout


def test_the_setting_overrides_the_config(tmp_path: Path) -> None:
    result = torch_standard(tmp_path, spelled(COMPILE_FEATURE, 20), override="23")
    assert "standard=[23]" in result.stdout, result.stdout
