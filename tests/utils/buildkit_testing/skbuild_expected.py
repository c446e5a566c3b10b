"""What tests/test_scikit_build_core_corpus.py expects of each ported sample.

* ``BUILDS``: how a sample's buildkit wheel is built: the environment and config settings
  of scikit-build-core's own test, in buildkit's spelling, and what must be built or
  fetched first.
* ``EXPECTED``: how the buildkit wheel differs from scikit-build-core's (the data that
  ``python -m buildkit_testing.skbuild_reference`` wrote), every difference with its reason.
* ``CHECKS``: what scikit-build-core's own tests check of the installed sample: Python
  statements and what they print.
* ``SDISTS``: the same as ``EXPECTED`` for the sdists of the samples about sdists, with the
  metadata lines their tests check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Build:
    """How one sample's buildkit wheel is built."""

    env: Mapping[str, str] = field(default_factory=dict)
    config_settings: Mapping[str, str] = field(default_factory=dict)
    first: tuple[str, ...] = ()  # samples whose wheels the build needs (its build requirements)
    helpers: tuple[str, ...] = ()  # folders of the sample built into wheels first (with hatchling)
    downloads: tuple[str, ...] = ()  # keys of CORPUS_BUILD_REQUIREMENTS the build installs
    tool: str | None = None  # a program it needs on PATH (the test skips without it)
    isolated: bool = False  # in pip's isolated build environment (else in a venv with the requirements)


BUILDS = {
    # test_pyproject_extra_dirs.py: one value from each layer; scikit-build-core's environment
    # (SKBUILD_CMAKE_DEFINE) beats its config settings, buildkit's config settings beat the
    # environment, so each variable is set where the CMakeLists' check wants it to win.
    "filepath_pure": Build(env={"SOME_DEFINE3": "baz", "SOME_DEFINE4": "baz", "CMAKE_ARGS": "-DSOME_ARGS1=baz"},
                           config_settings={"SOME_DEFINE2": "bar"}),
    # test_pyproject_pep517.py::test_passing_cxx_flags
    "simple_pyproject_script_with_flags": Build(env={"CMAKE_ARGS": '-DCMAKE_C_FLAGS="-DFOO=1 -DBAR="'}),
    # Both in pip's own isolated environment: what CMake finds there (pybind11's config files,
    # the helper distribution's cmake.* entry points) is the point.
    "simple_pyproject_ext": Build(isolated=True),
    "custom_cmake": Build(helpers=("extern",), downloads=("hatchling",), isolated=True),
    "cython_pxd_editable/pkg1": Build(downloads=("cython",)),
    "cython_pxd_editable/pkg2": Build(first=("cython_pxd_editable/pkg1",), downloads=("cython",)),
    "fortran_example": Build(tool="gfortran"),
}

# Reasons shared by several samples.
TOP_LEVEL = "setuptools writes top_level.txt into every wheel's metadata"
VERSION_MODULE = "buildkit writes <package>/version.py (the version the build used) into the package"
NO_BINARY = ("the wheel holds no binary: buildkit tags it py3-none-any, scikit-build-core tags every wheel it "
             "ran CMake for with the interpreter and platform")
ONLY_A_PROGRAM = ("the only binary is a program, no extension module: buildkit tags such a wheel "
                  "py3-none-<platform>, scikit-build-core with the interpreter's tag")


@dataclass(frozen=True)
class Expected:
    """How the buildkit wheel of a sample differs from scikit-build-core's: files only in
    one of them, with the reason each; buildkit's tag (normalised) where it differs, and why."""

    only_buildkit: dict[str, str] = field(default_factory=dict)
    only_skbuild: dict[str, str] = field(default_factory=dict)
    tag: tuple[str, str] | None = None


def _usual(distribution: str, *version_modules: str, tag: tuple[str, str] | None = None,
           only_skbuild: dict[str, str] | None = None) -> Expected:
    """top_level.txt, and version.py in each package named."""
    return Expected({f"{distribution}.dist-info/top_level.txt": TOP_LEVEL,
                     **{f"{package}/version.py": VERSION_MODULE for package in version_modules}},
                    only_skbuild or {}, tag)


EXPECTED = {
    "simplest_c": _usual("simplest-0.0.1", "simplest"),
    "navigate_editable": _usual("navigate_editable-0.0.1", "shared_pkg"),
    "cmake_generated": _usual("cmake_generated-1.2.3", tag=("py3-none-{platform}", (
        "the only binary is a plain shared library (pkg.so, loaded with ctypes), no extension module: buildkit "
        "tags such a wheel py3-none-<platform>, scikit-build-core with the interpreter's tag"))),
    "importlib_editable": _usual("pkg-0.0.1", "pkg"),
    "simple_pyproject_ext": _usual("cmake_example-0.0.1"),
    "simple_pyproject_source_dir": _usual("cmake_example-0.0.1"),
    "cmake_defines": _usual("cmake_defines-0.0.1", tag=("py3-none-any", NO_BINARY)),
    "config_settings": _usual("config_settings-0.0.1", tag=("py3-none-any", NO_BINARY)),
    "abi3_pyproject_ext": _usual("abi3_example-0.0.1"),
    # setuptools, which scikit-build-core's plugin runs, writes top_level.txt as well.
    "abi3_setuptools_ext": Expected(),
    "toml_setuptools_ext": Expected(),
    "simple_setuptools_ext": Expected(),
    "mixed_setuptools": Expected({"mixed_setuptools/version.py": VERSION_MODULE}),
    "simple_pure": _usual("simple_pure-0.0.1", tag=("py3-none-{platform}", ONLY_A_PROGRAM)),
    "simple_pyproject_script_with_flags": _usual("cmake_example-0.0.1"),
    "multi_build_type": _usual("multi_build_type-0.0.1", "multi_build_type", tag=("py3-none-any", NO_BINARY)),
    "filepath_pure": _usual("cmake_dirs-0.0.1", "cmake_dirs", tag=("py3-none-any", NO_BINARY)),
    "sdist_config": _usual("sdist_config-0.1.0"),
    "custom_cmake": _usual("custom_modules-2.3.4", tag=("py3-none-any", NO_BINARY)),
    "cython_pxd_editable/pkg1": _usual("pkg1-1.0.0", "pkg1"),
    "cython_pxd_editable/pkg2": _usual("pkg2-1.0.0", "pkg2"),
    "fortran_example": _usual("fibby-0.0.1"),
    "generate_include": _usual("generate_include-0.0.1"),
    "simple_purelib_package": _usual("purelib_example-0.0.1", "purelib_example"),
    "namespace_purelib_package": _usual("myns_mypkg-0.0.1", "myns/mypkg"),
    "pep639_pure": _usual("pep639_pure-0.1.0"),
}

# What each sample's own tests in scikit-build-core check of the installed package:
# Python statements and what they print.
RESOURCES_PROBE = """
from importlib import import_module
from importlib.resources import files
for name in ("pkg", "pkg.sub_a", "pkg.sub_b", "pkg.sub_b.sub_c", "pkg.sub_b.sub_d"):
    entries = [entry.name for entry in files(import_module(name)).iterdir()]
    print(name, any(".so" in entry or ".pyd" in entry for entry in entries))
"""
# A program installed into site-packages/bin, run (test_simple_pure.py::test_install).
RUN_BIN = """
import subprocess, sysconfig
print(repr(subprocess.run([sysconfig.get_paths()["purelib"] + "/bin/simple_pure"], capture_output=True,
                          text=True, check=True).stdout))
"""
# The compiled program the wheel's .data/scripts installed into the environment's scripts folder.
RUN_SCRIPT = """
import subprocess, sysconfig
print(subprocess.run([sysconfig.get_paths()["scripts"] + "/cmake_example"], capture_output=True, text=True,
                     check=True).stdout)
"""
# A script in the environment's scripts folder: the wheel's .data/scripts (test_custom_modules.py).
SCRIPT_SHEBANG = """
import pathlib, sys, sysconfig
script = pathlib.Path(sysconfig.get_paths()["scripts"], "script1")
print(script.read_text().startswith(f"#!{sys.executable}\\n"), script.stat().st_mode & 0o111 != 0)
"""
GENERATED = "import cmake_generated as g; "
NESTED = "from cmake_generated.nested1 import generated as n; "
CMAKE_EXAMPLE = (("import cmake_example; print(cmake_example.__version__)", "0.0.1"),
                 ("import cmake_example; print(cmake_example.add(1, 2))", "3"))
ABI3_EXAMPLE = (("import abi3_example; print(abi3_example.square(2))", "4.0"),)
CHECKS: dict[str, tuple[tuple[str, str], ...]] = {
    "simplest_c": (("from simplest import square; print(square(2))", "4.0"),),
    "navigate_editable": (("import shared_pkg; shared_pkg.call_c_method()", "c_method"),
                          ("import shared_pkg; shared_pkg.call_py_method()", "py_method"),
                          ("import shared_pkg; shared_pkg.read_py_data_txt()", "Some_value_Py"),
                          ("import shared_pkg; shared_pkg.read_c_generated_txt()", "Some_value_C")),
    "cmake_generated": (
        (GENERATED + "print(g.get_static_data())", "static value in top-level package"),
        ("import cmake_generated.nested1 as m; print(m.get_static_data())", "static value in subpackage 1"),
        (GENERATED + "print(g.get_namespace_static_data())", "static value in namespace package"),
        (GENERATED + "print(g.get_configured_data())", "value written by cmake file generation"),
        (GENERATED + "print(g.get_namespace_generated_data())", "value written by cmake custom_command"),
        (GENERATED + "print(g.ctypes_function()())", "42"),
        (NESTED + "print(n.__version__)", "1.2.3"),
        (NESTED + "print(n.cmake_generated_static_data())", "static value in top-level package"),
        (NESTED + "print(n.cmake_generated_nested_static_data())", "static value in subpackage 1"),
        (NESTED + "print(n.cmake_generated_namespace_static_data())", "static value in namespace package"),
        (NESTED + "print(n.nested_data)", "success"),
        (NESTED + "print(n.nested2_check())", "success"),
        ("from cmake_generated.nested2 import nested1_generated_check as c; print(c())", "success"),
        (NESTED + "print(n.cmake_generated_namespace_generated_data())", "value written by cmake custom_command"),
        (GENERATED + "print(g.__version__)", "1.2.3"),
        ("import importlib.metadata as m; print(m.version('cmake_generated'))", "1.2.3"),
        ("from cmake_generated.nested2 import get_generated_data as d; print(d())",
         "value written into a regular subpackage")),
    "importlib_editable": (("import pkg, pmod, emod; print(pmod.square(3), emod.square(3))", "9 9.0"),
                           (RESOURCES_PROBE, "pkg True\npkg.sub_a True\npkg.sub_b True\npkg.sub_b.sub_c True\n"
                                             "pkg.sub_b.sub_d True")),
    "simple_pyproject_ext": CMAKE_EXAMPLE,
    "simple_pyproject_source_dir": CMAKE_EXAMPLE,
    "cmake_defines": (),
    "config_settings": (),
    "abi3_pyproject_ext": ABI3_EXAMPLE,
    "abi3_setuptools_ext": ABI3_EXAMPLE,
    "toml_setuptools_ext": CMAKE_EXAMPLE,
    "simple_setuptools_ext": CMAKE_EXAMPLE,
    "mixed_setuptools": (("import mixed_setuptools; print(mixed_setuptools.add(1, 2))", "3"),),
    "simple_pure": ((RUN_BIN, repr("0 one 2 three \n")),),
    "simple_pyproject_script_with_flags": ((RUN_SCRIPT, "Hello world!"),),
    "multi_build_type": (("import multi_build_type; print(multi_build_type.__version__)", "0.0.1"),),
    "filepath_pure": (("import cmake_dirs.main, random_file; print('imported')", "imported"),),
    "sdist_config": (("import sdist_config; print(sdist_config.life())", "42"),
                     ("import output; print(output.version)", "0.1.0")),
    "custom_cmake": ((SCRIPT_SHEBANG, "True True"),
                     ("from importlib import metadata; print(metadata.version('custom_modules'))", "2.3.4")),
    "cython_pxd_editable/pkg1": (("import pkg1.one; print(pkg1.one.__pyx_capi__['one'].__class__.__name__)",
                                  "PyCapsule"),),
    # two.pyx cimports pkg1.one: importing it imports pkg1.one and takes one() from its capsule.
    "cython_pxd_editable/pkg2": (("import pkg2.two, sys; print('pkg1.one' in sys.modules)", "True"),),
    "fortran_example": (("import fibby, numpy as np; a = np.zeros(9); fibby.fib(a); print(a)",
                         "[ 0.  1.  1.  2.  3.  5.  8. 13. 21.]"),),
    # test_generate_include.py: the generated file is in the wheel.
    "generate_include": (("from importlib.resources import files; "
                          "print(files('generate_include').joinpath('_version.py').is_file())", "True"),),
    "simple_purelib_package": (("import purelib_example; print(purelib_example.__version__)", "1.2.3"),),
    "namespace_purelib_package": (("import myns.mypkg; print(myns.mypkg.__version__)", "1.2.3"),),
    # test_pyproject_pep517.py's PEP 639 checks of the metadata.
    "pep639_pure": (("from importlib.metadata import metadata; m = metadata('pep639_pure'); "
                     "print(m['Metadata-Version'], m['License-Expression'], m.get_all('License-File'))",
                     "2.4 MIT ['LICENSE1.txt', 'nested/more/LICENSE2.txt']"),),
}


@dataclass(frozen=True)
class SdistExpected:
    """How buildkit's sdist differs from scikit-build-core's, and the PKG-INFO lines checked."""

    only_buildkit: dict[str, str]
    only_skbuild: dict[str, str]
    metadata: tuple[str, ...]


EGG_INFO = ("setuptools, run by scikit-build-core's plugin, puts the .egg-info folder beside the packages "
            "(package_dir src); buildkit keeps it in the build folder")
SETUP_PY_DELETED = "the port deletes setup.py: buildkit.build_meta needs none"
SDISTS = {
    "simple_setuptools_ext": SdistExpected(
        {}, {"cmake_example-0.0.1/setup.py": SETUP_PY_DELETED,
             **{f"cmake_example-0.0.1/src/cmake_example.egg-info/{name}": EGG_INFO for name in (
                 "PKG-INFO", "SOURCES.txt", "dependency_links.txt", "not-zip-safe", "requires.txt", "top_level.txt")}},
        ("Name: cmake-example", "Version: 0.0.1", "Requires-Python: >=3.9", "Provides-Extra: test")),
    "toml_setuptools_ext": SdistExpected(
        {"cmake_example-0.0.1/src/main.c": "buildkit's sdist holds the C source CMake builds; scikit-build-core's "
                                           "plugin leaves it out (its test marks it TODO): that sdist builds no wheel"},
        {f"cmake_example-0.0.1/src/cmake_example.egg-info/{name}": EGG_INFO for name in (
            "PKG-INFO", "SOURCES.txt", "dependency_links.txt", "top_level.txt")},
        ("Name: cmake-example", "Version: 0.0.1", "Requires-Python: >=3.9")),
    "sdist_config": SdistExpected(
        {"sdist_config-0.1.0/generate.cmake": "the port adds it ([[tool.scikit-build.generate]], done by CMake)",
         "sdist_config-0.1.0/setup.cfg": "setuptools' sdist writes its egg_info options there"},
        {**{f"sdist_config-0.1.0/dummy/{name}": (
            "sdist.cmake = true configures while making the sdist, and FetchContent copies external/dummy into "
            "dummy/, which sdist.include ships; buildkit's sdist runs no CMake: a wheel built from it fetches "
            "external/dummy, which it holds") for name in ("CMakeLists.txt", "include/dummy.h",
                                                              "tools/dummy_helper.cmake")},
         "sdist_config-0.1.0/overwrite.cmake": ("[[tool.scikit-build.generate]] with location = \"source\" writes "
                                                "it into the source tree before the sdist is made; generate.cmake "
                                                "writes it when CMake configures")},
        ("Name: sdist_config", "Version: 0.1.0")),
}
