"""A CUDA torch extension of a C++20 torch (torch 2.10 on) under every CMake buildkit accepts,
without torch: a fake torch prefix whose config runs (the CUDA path runs torch's own config)
and a LIBRARY target of a C++ and a CUDA source, configured and built by real cmake, ninja and
nvcc.  CMake before 3.25.2 knows no nvcc flag for CUDA C++20 and refused the target
("requires the language dialect CUDA20"); BuildkitTorch.cmake gives it, said once.
tests/test_torch_extension.py builds with a real torch (``-m torch``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from buildkit._util.resources import cmake_dir
from buildkit.builder.toolchain.tools import find_cmake, find_ninja
from buildkit_testing.cmake_releases import OLDEST_CMAKE, oldest_cmake
from buildkit_testing.cuda import find_nvcc, needs_nvcc

pytestmark = [pytest.mark.slow, pytest.mark.cuda, needs_nvcc]

# Runs as torch's own does under find_package(Torch): the prefix, the libraries, a torch target
# of the C++ standard torch 2.10-2.14 name in this spelling.
CONFIG = """\
get_filename_component(TORCH_INSTALL_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(TORCH_LIBRARIES "${TORCH_INSTALL_PREFIX}/lib/libtorch.so")
add_library(torch INTERFACE IMPORTED)
set_target_properties(torch PROPERTIES CXX_STANDARD 20)
set(Torch_FOUND TRUE)
"""
CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project(fake LANGUAGES CXX CUDA)
include(BuildkitTorch)
buildkit_torch_extension(ops LIBRARY SOURCES ops.cpp kernel.cu)
buildkit_torch_extension(more LIBRARY SOURCES more.cu)
"""
# Both fail to compile below C++20 (nvcc 13 defaults to C++17).
SOURCES = {
    "ops.cpp": '#include <concepts>\nstatic_assert(std::integral<int>);\nextern "C" int ops_value() { return 1; }\n',
    "kernel.cu": "#include <concepts>\nstatic_assert(std::integral<int>);\n__global__ void twice(int* x) { *x *= 2; }\n",
    "more.cu": "#include <concepts>\nstatic_assert(std::integral<long>);\n__global__ void more(int* x) { *x += 1; }\n",
}


@pytest.mark.parametrize("release", ["newest", f"oldest {OLDEST_CMAKE}"])
def test_a_cuda_extension_of_a_cxx20_torch_builds_under_every_cmake(tmp_path: Path, release: str) -> None:
    cmake = find_cmake().path if release == "newest" else oldest_cmake()
    torch = tmp_path / "torch"
    (torch / "share" / "cmake" / "Torch").mkdir(parents=True)
    (torch / "share" / "cmake" / "Torch" / "TorchConfig.cmake").write_text(CONFIG)
    (torch / "include" / "torch" / "csrc" / "api" / "include").mkdir(parents=True)
    for header in ("all.h", "library.h"):  # what the precompiled header of a LIBRARY includes
        (torch / "include" / "torch" / header).write_text("#pragma once\n")
    (torch / "lib").mkdir()
    (tmp_path / "empty.c").write_text("")
    for library in ("torch", "torch_python"):
        subprocess.run(["cc", "-shared", "-o", torch / "lib" / f"lib{library}.so", tmp_path / "empty.c"], check=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(CMAKELISTS)
    for name, text in SOURCES.items():
        (project / name).write_text(text)
    build = project / "build"
    configured = subprocess.run(
        [cmake, "-S", project, "-B", build, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={find_ninja().path}",
         f"-DCMAKE_MODULE_PATH={cmake_dir()}", f"-DCMAKE_PREFIX_PATH={tmp_path}", f"-DCMAKE_CUDA_COMPILER={find_nvcc()}",
         "-DCMAKE_CUDA_ARCHITECTURES=75-real", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
        capture_output=True, text=True)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    said = [line for line in configured.stdout.splitlines() if "knows no nvcc flag for CUDA C++20" in line]
    if release == "newest":
        assert not said, said
    else:  # once, for the folder: the second target finds the flag given
        assert len(said) == 1 and said[0].startswith(f"-- buildkit: ops: CMake {OLDEST_CMAKE}."), said
        assert said[0].endswith("knows no nvcc flag for CUDA C++20 (3.25.2 and later do): buildkit gives it, -std=c++20")
    built = subprocess.run([cmake, "--build", build], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    commands = {Path(c["file"]).name: c["command"] for c in json.loads((build / "compile_commands.json").read_text())}
    assert all("-std=c++20" in commands[name] or "-std=gnu++20" in commands[name] for name in SOURCES), commands
