"""The ports: what a user changes to build each of scikit-build-core's samples with buildkit.

Every port rewrites ``[build-system]`` and drops the ``[tool.scikit-build*]`` tables;
what else it changes is below, each line with its reason.  No port edits a
``CMakeLists.txt``.  No port sets ``install-prefix``: each CMakeLists.txt reads
``SKBUILD_*`` variables (or the project has no package folder), so buildkit installs
at the wheel's root, as scikit-build-core does.  docs/migration/from-scikit-build-core.md
tabulates them.
"""

from __future__ import annotations

from buildkit_testing.skbuild_corpus import Port

NO_PROJECT_TABLE = ("buildkit reads the project's name and version (SKBUILD_PROJECT_NAME/VERSION) even to "
                    "configure; the sample has no [project] table (scikit-build-core's tests only configure it)")
SETUP_PY = ("buildkit.build_meta runs buildkit.setup() itself where there is no setup.py; the plugin's "
            "`cmake_source_dir=\".\"` is buildkit's default")
SETUP_CFG = "its [metadata] and [options] move to [project] (setuptools reads either, buildkit reads [project])"
# [[tool.scikit-build.generate]] in sdist_config, done by CMake after project(): the port adds it.
GENERATE_CMAKE = r"""# What scikit-build-core's [[tool.scikit-build.generate]] wrote before CMake ran, written
# by CMake itself: CMAKE_PROJECT_sdist_config_INCLUDE runs this right after
# project(sdist_config), before the CMakeLists includes what it writes.
file(READ "${CMAKE_CURRENT_SOURCE_DIR}/input.cmake" template)
string(REPLACE "\${version}" "${SKBUILD_PROJECT_VERSION_FULL}" generated "${template}")
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/output.cmake" "${generated}")
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/output.py" "version = \"${SKBUILD_PROJECT_VERSION_FULL}\"\n")
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/output.py" DESTINATION .)
file(WRITE "${CMAKE_CURRENT_SOURCE_DIR}/overwrite.cmake" "set(MY_NAME \"${SKBUILD_PROJECT_NAME}\")\n")
"""


def _project(name: str, version: str = "0.0.1", *more: str) -> str:
    return "\n".join(["[project]", f'name = "{name}"', f'version = "{version}"', *more])


PORTS = {port.name: port for port in (
    Port("simplest_c", """
# Outside a git checkout buildkit reads no .gitignore: the files the sample's .gitignore
# names (`*ignored*`) are left out by name, as scikit-build-core leaves them out.
wheel-exclude = ["simplest/ignored.txt", "simplest/artifact_ignored.txt", "simplest/ignored_included.txt"]
"""),
    Port("navigate_editable", """
packages = ["python/shared_pkg"]
"""),
    Port("cmake_generated", """
# [[tool.scikit-build.generate]] wrote cmake_generated/_version.py from a template.
version-module = "_version.py"
# scikit-build-core's wheel.exclude = ["**.c", "**.in"]: buildkit's globs take '**' as a whole segment.
wheel-exclude = ["**/*.c", "**/*.in"]
""", project_edits={'dynamic = ["version"]': (
        'version = "1.2.3"',
        "scikit-build-core's regex provider read the version from CMakeLists.txt; buildkit takes a static "
        "[project] version (or version.txt)")}),
    Port("importlib_editable", """
cmake-source-dir = "src"
"""),
    # No package folder: buildkit installs at the wheel's root by default.
    Port("simple_pyproject_ext", "", build_requires=("setuptools-buildkit", "pybind11")),
    Port("simple_pyproject_source_dir", 'cmake-source-dir = "src"'),
    Port("cmake_defines", r"""
[tool.buildkit.cmake-defines]
# The same TOML lists: buildkit joins them with ';' and escapes a ';' inside an item.
ONE_LEVEL_LIST = ["Foo", "Bar", "ExceptionallyLargeListEntryThatWouldOverflowTheLine", "Baz"]
NESTED_LIST = ["Apple", "Lemon;Lime", "Banana"]
""", project_edits={"": (_project("cmake_defines"), NO_PROJECT_TABLE)}),
    Port("abi3_pyproject_ext", """
# wheel.py-api: the same key and values; CMake gets SKBUILD_SABI_VERSION (3.9) and
# SKBUILD_SABI_COMPONENT as from scikit-build-core.
py-api = "cp39"
"""),
    Port("abi3_setuptools_ext", """
# setup.cfg's [bdist_wheel] py_limited_api = cp39.
py-api = "cp39"
""", project_edits={"": (_project("abi3_example", "0.0.1", 'requires-python = ">=3.9"'), SETUP_CFG)},
        files={"setup.py": (None, SETUP_PY), "setup.cfg": (None, SETUP_CFG)}),
    Port("toml_setuptools_ext", ""),
    Port("simple_setuptools_ext", """
# setup()'s cmake_process_manifest_hook dropped the LICENSE that CMake installs at the
# wheel's root: the license ships in .dist-info instead.
wheel-exclude = ["LICENSE"]
""", project_edits={"": (_project("cmake-example", "0.0.1", 'requires-python = ">=3.9"',
                                  'license-files = ["LICENSE"]',
                                  'optional-dependencies = { test = ["pytest>=6.0"] }'),
                         "setup()'s keywords move to [project]")},
        files={"setup.py": (None, SETUP_PY)}),
    Port("mixed_setuptools", """
# EXAMPLE_DEFINE1 to 5 came from setup.cfg's [build_cmake] cmake_args, setup()'s cmake_args,
# cmake.args and cmake.define: in buildkit one table (CMAKE_ARGS stays for the command line).
cmake-defines = {EXAMPLE_DEFINE1=1, EXAMPLE_DEFINE2=2, EXAMPLE_DEFINE3=3, EXAMPLE_DEFINE4=4, EXAMPLE_DEFINE5=5}
""", project_edits={"": (_project("mixed-setuptools", "3.1.4", 'requires-python = ">=3.9"'), SETUP_CFG)},
        files={"setup.py": (None, SETUP_PY), "setup.cfg": (None, SETUP_CFG)}),
    Port("simple_pure", "", project_edits={"": (_project("simple_pure"), "the sample has no pyproject.toml "
                                                "(scikit-build-core's tests only configure and build it)")}),
    Port("simple_pyproject_script_with_flags", """
# wheel.py-api = "py3": the program uses no Python API.
py-api = "py3"
"""),
    Port("config_settings", """
# The declared config settings zmq.prefix (env ZMQ_PREFIX) and zmq.libzmq (default
# "system") become the CMake variables themselves: `-C ZMQ_PREFIX=...` or the
# environment variable ZMQ_PREFIX, and `-C ZMQ_LIBZMQ=...` over the default below.
cmake-forward = ["ZMQ_PREFIX", "ZMQ_LIBZMQ"]
cmake-defines = { ZMQ_LIBZMQ = "system" }
""", project_edits={"": (_project("config_settings"), NO_PROJECT_TABLE)}),
    Port("custom_cmake", "", build_requires=("setuptools-buildkit", "custom_cmake_testing_stuff"),
         project_edits={'dynamic = ["version"]': (
             'version = "2.3.4"', "scikit-build-core's regex provider read the version from CMakeLists.txt")}),
    Port("cython_pxd_editable/pkg1", "", build_requires=("setuptools-buildkit", "cython>=3.0.0")),
    Port("cython_pxd_editable/pkg2", "", build_requires=("setuptools-buildkit", "cython>=3.0.0", "pkg1")),
    Port("fortran_example", "", build_requires=("setuptools-buildkit", "numpy")),
    Port("multi_build_type", """
# cmake.build-type = ["Release", "Debug"]: both configurations installed into one wheel,
# Release built in the build folder, Debug in one of its own (build-types/Debug) after it.
build-type = ["Release", "Debug"]
"""),
    Port("filepath_pure", """
[tool.buildkit]
# wheel.install-dir: CMake's install prefix is this folder of the wheel; SKBUILD_PLATLIB_DIR stays the root.
install-dir = "cmake_dirs"
# SOME_DEFINE2 to 4 reach CMake from a config setting or the environment (scikit-build-core:
# -C cmake.define.SOME_DEFINE2=..., SKBUILD_CMAKE_DEFINE="SOME_DEFINE3=...;SOME_DEFINE4=...").
cmake-forward = ["SOME_DEFINE2", "SOME_DEFINE3", "SOME_DEFINE4"]

# cmake.define and cmake.args (-D arguments only): one table (CMAKE_ARGS stays for the command line).
[tool.buildkit.cmake-defines]
SOME_DEFINE = "foo"
SOME_DEFINE2 = "foo"
SOME_DEFINE3 = "foo"
SOME_ARGS1 = "foo"
SOME_ARGS2 = "foo"
"""),
    # No CMake (wheel.cmake = false): the Python side only, a pure wheel.
    Port("generate_include", """
cmake = false
# [[tool.scikit-build.generate]] wrote src/generate_include/_version.py from a template.
version-module = "_version.py"
"""),
    Port("simple_purelib_package", "cmake = false"),
    # The package myns.mypkg in src/myns/mypkg, found from the dotted [project] name as scikit-build-core finds it.
    Port("namespace_purelib_package", "cmake = false"),
    Port("pep639_pure", "cmake = false"),
    Port("sdist_config", """
# [[tool.scikit-build.generate]] has no equivalent: generate.cmake (added) writes the three
# files after project(sdist_config).
cmake-defines = { FETCHCONTENT_QUIET = false, CMAKE_PROJECT_sdist_config_INCLUDE = "generate.cmake" }
""", files={"generate.cmake": (GENERATE_CMAKE, "[[tool.scikit-build.generate]], written by CMake")}),
)}

# A hatchling project in scikit-build-core's samples: the other distribution in the
# namespace `myns` of namespace_purelib_package, installed beside its editable install.
# Ported like the others (its [tool.hatch] table stays, unread), so that it builds from
# the wheelhouse; its reference data (hatchling's wheel) are not compared.
SIBLING_PORT = Port("namespace_sibling_package", "cmake = false")
