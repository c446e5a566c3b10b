"""The generated benchmark project: N C++ files, a library, a Python extension, built the
buildkit way or the scikit-build-core way.

Used by benchmarks/rebuild.py, benchmarks/shared_cache.py and tests/test_compiler_cache.py;
``pyproject_toml`` and the backends also by the other benchmarks' generated projects.
"""

from __future__ import annotations

from pathlib import Path

BUILDKIT_BACKEND = ("setuptools-buildkit", "buildkit.build_meta")
SKBUILD_BACKEND = ("scikit-build-core", "scikit_build_core.build")


def pyproject_toml(name: str, backend: tuple[str, str], project: str, tool: str, *,
                   requires: tuple[str, ...] = ()) -> str:
    """A generated project's pyproject.toml: its backend (distribution, module) and any other build
    requirement, the [project] lines besides the name, and the backend's own table."""
    listed = ", ".join(f'"{r}"' for r in (backend[0], *requires))
    return (f'[build-system]\nrequires = [{listed}]\nbuild-backend = "{backend[1]}"\n\n'
            f'[project]\nname = "{name}"\n{project}\n\n{tool}\n')


BUILDKIT_PYPROJECT = pyproject_toml(
    "benchproj", BUILDKIT_BACKEND,
    'requires-python = ">=3.11"\ndynamic = ["version", "dependencies", "scripts", "readme"]',
    '[tool.buildkit]\npackage = "benchproj"\n'
    'extension = { name = "benchproj._C", sources = ["csrc/stub.c"], libraries = ["benchproj_python"] }')

SKBUILD_PYPROJECT = pyproject_toml(
    "benchproj", SKBUILD_BACKEND, 'version = "0.1.0"',
    '[tool.scikit-build]\nbuild-dir = "build/{wheel_tag}"\neditable.mode = "inplace"\ncmake.build-type = "Release"')

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project(benchproj LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
file(GLOB CORE_SOURCES CONFIGURE_DEPENDS src/*.cpp)
add_library(benchproj SHARED ${{CORE_SOURCES}})
target_include_directories(benchproj PUBLIC include)
set_target_properties(benchproj PROPERTIES INSTALL_RPATH "$ORIGIN")
{extension}
"""

BUILDKIT_EXTENSION = """\
add_library(benchproj_python SHARED csrc/bindings.c)
target_link_libraries(benchproj_python PRIVATE benchproj Python::Module)
set_target_properties(benchproj_python PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS benchproj benchproj_python LIBRARY DESTINATION lib)
"""

SKBUILD_EXTENSION = """\
python_add_library(_C MODULE csrc/bindings.c csrc/skbuild_init.c WITH_SOABI)
target_link_libraries(_C PRIVATE benchproj)
set_target_properties(_C PROPERTIES INSTALL_RPATH "$ORIGIN")
install(TARGETS _C benchproj LIBRARY DESTINATION benchproj)
"""

UNIT = """\
#include <vector>
#include <numeric>
#include <string>
#include <map>
#include "bench.h"
// A few templates per file so each translation unit costs real compile time.
namespace bench {{
template <typename T> T fold{i}(const std::vector<T>& v) {{ return std::accumulate(v.begin(), v.end(), T{{}}); }}
double unit{i}(int n) {{
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), {i}.0);
  std::map<std::string, double> m;
  for (int k = 0; k < 8; ++k) m[std::to_string(k)] = fold{i}(v) / (k + 1);
  return m["3"];
}}
}}
"""

BINDINGS = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
double bench_total(int n);
static PyObject* total(PyObject* self, PyObject* arg) {{ return PyFloat_FromDouble(bench_total((int)PyLong_AsLong(arg))); }}
static PyMethodDef methods[] = {{{{"total", total, METH_O, ""}}, {{NULL, NULL, 0, NULL}}}};
static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, "benchproj._C", NULL, -1, methods}};
__attribute__((visibility("default"))) PyObject* benchproj_init_module(void) {{ return PyModule_Create(&module); }}
"""


def generate(root: Path, files: int, flavour: str) -> None:
    (root / "src").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "csrc").mkdir()
    (root / "benchproj").mkdir()
    declarations = "\n".join(f"double unit{i}(int n);" for i in range(files))
    (root / "include" / "bench.h").write_text(f"#pragma once\nnamespace bench {{\n{declarations}\n}}\n")
    for i in range(files):
        (root / "src" / f"unit{i:03d}.cpp").write_text(UNIT.format(i=i))
    calls = " + ".join(f"bench::unit{i}(n)" for i in range(files))
    (root / "src" / "total.cpp").write_text(
        f'#include "bench.h"\nextern "C" double bench_total(int n) {{ return {calls}; }}\n')
    (root / "csrc" / "bindings.c").write_text(BINDINGS.format())
    extension = BUILDKIT_EXTENSION if flavour == "buildkit" else SKBUILD_EXTENSION
    (root / "CMakeLists.txt").write_text(CMAKELISTS.format(extension=extension))
    if flavour == "buildkit":
        (root / "pyproject.toml").write_text(BUILDKIT_PYPROJECT)
        (root / "setup.py").write_text("from buildkit import setup\n\nsetup()\n")
        (root / "version.txt").write_text("0.1.0\n")
        (root / "csrc" / "stub.c").write_text(
            "#include <Python.h>\nextern PyObject* benchproj_init_module(void);\n"
            "PyMODINIT_FUNC PyInit__C(void) { return benchproj_init_module(); }\n")
        (root / "benchproj" / "__init__.py").write_text("from ._C import total\n")
    else:
        (root / "pyproject.toml").write_text(SKBUILD_PYPROJECT)
        (root / "csrc" / "skbuild_init.c").write_text(
            "#include <Python.h>\nPyObject* benchproj_init_module(void);\n"
            "PyMODINIT_FUNC PyInit__C(void) { return benchproj_init_module(); }\n")
        (root / "benchproj" / "__init__.py").write_text("from ._C import total\n")
