"""scikit-build-core's own sample packages, ported to buildkit by configuration.

Each sample comes unmodified from scikit-build-core's pinned sdist.  Its port
(buildkit_testing.skbuild_corpus.PORTS) is everything a user changes: the
``[build-system]`` table, a ``[tool.buildkit]`` table and ``[project]`` lines, each
with its reason; no CMakeLists.txt is edited (docs/migration/from-scikit-build-core.md
tabulates the changes).  For each sample the buildkit wheel, built by pip in an isolated
environment from the local wheelhouse, is compared file by file with the wheel
scikit-build-core builds from the unmodified sample; every difference is listed with
its reason, and the actual difference must equal the list.  Then the wheel installs
into a fresh venv and passes what scikit-build-core's own tests check of the sample
(the facts, reproduced: tests/test_simplest_c.py, test_editable.py,
test_editable_generated.py and test_pyproject_pep517.py of its sdist).

Without buildkit shipping every file CMake installs, three comparisons fail
(navigate_editable's ``data/.hidden``, cmake_generated's generated files and
``pkg.so``, importlib_editable's ``testfile``s) and so do cmake_generated's checks;
without the metadata directory, simplest_c's ``.dist-info`` files are missing.
"""

from __future__ import annotations

import configparser
import json
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from buildkit_testing.artifacts import only_wheel
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.skbuild_corpus import (
    DEFINES_PORT,
    PORTS,
    SIBLING_PORT,
    IndexUnreachable,
    apply_port,
    reference_wheels,
    sample_packages,
)
from buildkit_testing.venvs import make_venv, pip_into, venv_env

pytestmark = pytest.mark.slow

# Reasons shared by several samples.
TOP_LEVEL = "setuptools writes top_level.txt into every wheel's metadata"
VERSION_MODULE = "buildkit writes <package>/version.py (the version the build used) into the package"


@dataclass(frozen=True)
class Expected:
    """How the buildkit wheel of a sample differs from scikit-build-core's: files only
    in one of them, with the reason each; the wheel tag when it differs."""

    only_buildkit: dict[str, str] = field(default_factory=dict)
    only_skbuild: dict[str, str] = field(default_factory=dict)
    interpreter_abi: tuple[str, str] | None = None  # buildkit's tag without the platform, and why


EXPECTED = {
    "simplest_c": Expected({"simplest/version.py": VERSION_MODULE,
                            "simplest-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "navigate_editable": Expected({"shared_pkg/version.py": VERSION_MODULE,
                                   "navigate_editable-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "cmake_generated": Expected(
        {"cmake_generated-1.2.3.dist-info/top_level.txt": TOP_LEVEL},
        interpreter_abi=("py3-none", "the only binary is a plain shared library (pkg.so, loaded with ctypes), no "
                                      "extension module: buildkit tags such a wheel py3-none-<platform>, "
                                      "scikit-build-core with the interpreter's tag")),
    "importlib_editable": Expected({"pkg/version.py": VERSION_MODULE, "pkg-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "simple_pyproject_ext": Expected({"cmake_example-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "simple_pyproject_source_dir": Expected({"cmake_example-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "generate_include": Expected({"generate_include-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "simple_purelib_package": Expected({"purelib_example/version.py": VERSION_MODULE,
                                        "purelib_example-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "namespace_purelib_package": Expected({"myns/mypkg/version.py": VERSION_MODULE,
                                           "myns_mypkg-0.0.1.dist-info/top_level.txt": TOP_LEVEL}),
    "pep639_pure": Expected({"pep639_pure-0.1.0.dist-info/top_level.txt": TOP_LEVEL}),
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
GENERATED = "import cmake_generated as g; "
NESTED = "from cmake_generated.nested1 import generated as n; "
CMAKE_EXAMPLE = (("import cmake_example; print(cmake_example.__version__)", "0.0.1"),
                 ("import cmake_example; print(cmake_example.add(1, 2))", "3"))
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

# Runs each check in the installed venv and prints what each printed (or raised), as JSON.
CHECK_RUNNER = """
import contextlib, io, json, sys
results = []
for code in json.loads(sys.argv[1]):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(code, {})
    except BaseException as error:
        out.write(f"{type(error).__name__}: {error}")
    results.append(out.getvalue().strip())
print(json.dumps(results))
"""


# --- fixtures ----------------------------------------------------------------------

@pytest.fixture(scope="session")
def samples() -> Path:
    try:
        return sample_packages()
    except IndexUnreachable as error:
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def references(samples: Path) -> dict[str, Path]:
    try:
        return reference_wheels(samples, list(PORTS))
    except IndexUnreachable as error:
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def buildkit_wheel(samples: Path, wheelhouse: Path, tmp_path_factory) -> Callable[[str], Path]:
    """``buildkit_wheel(name)``: the wheel pip builds, in an isolated environment, from
    the ported sample (built once per module)."""
    built: dict[str, Path] = {}
    python = make_venv(tmp_path_factory.mktemp("build-venv") / "venv", with_pip=False)

    def build(name: str) -> Path:
        if name not in built:
            folder = tmp_path_factory.mktemp(name)
            project = apply_port(samples, PORTS[name], folder / name)
            pip_into(python, wheelhouse, "wheel", "-q", "--no-deps", "-w", folder / "dist", project, cwd=folder)
            built[name] = only_wheel(folder / "dist")
        return built[name]

    return build


def wheel_contents(wheel: Path) -> set[str]:
    return {name for name in zipfile.ZipFile(wheel).namelist() if not name.endswith("/")}


def wheel_tag(wheel: Path) -> str:
    return "-".join(wheel.stem.split("-")[-3:])


# --- the comparison ----------------------------------------------------------------

@pytest.mark.parametrize("name", PORTS)
def test_wheel_holds_what_scikit_build_cores_does(name: str, buildkit_wheel, references) -> None:
    ours, theirs = buildkit_wheel(name), references[name]
    expected = EXPECTED[name]
    ours_files, their_files = wheel_contents(ours), wheel_contents(theirs)
    assert {"only in buildkit's": sorted(ours_files - their_files),
            "only in scikit-build-core's": sorted(their_files - ours_files)} == {
        "only in buildkit's": sorted(expected.only_buildkit), "only in scikit-build-core's": sorted(
            expected.only_skbuild)}
    interpreter, abi, platform = wheel_tag(theirs).split("-")
    if expected.interpreter_abi:
        interpreter, abi = expected.interpreter_abi[0].split("-")
    assert wheel_tag(ours) == f"{interpreter}-{abi}-{platform}"


@pytest.mark.parametrize("name", PORTS)
def test_wheel_passes_the_samples_own_checks(name: str, buildkit_wheel, wheelhouse: Path, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, wheelhouse, "install", "-q", buildkit_wheel(name))
    codes = [code for code, _ in CHECKS[name]]
    printed = json.loads(run([python, "-c", CHECK_RUNNER, json.dumps(codes)], cwd=tmp_path,
                             env=clean_env()).stdout)
    assert dict(zip(codes, printed)) == dict(CHECKS[name])


@pytest.mark.parametrize("name", ["simple_pyproject_ext", "simple_pyproject_source_dir"])
def test_cmake_example_metadata(name: str, buildkit_wheel) -> None:
    """What test_pyproject_pep517.py checks of the two samples' wheel metadata."""
    wheel = zipfile.ZipFile(buildkit_wheel(name))
    info = "cmake_example-0.0.1.dist-info"
    metadata = wheel.read(f"{info}/METADATA").decode().splitlines()
    assert {"Name: CMake.Example", "Version: 0.0.1", "Requires-Python: >=3.9", "Provides-Extra: test",
            'Requires-Dist: pytest>=6.0; extra == "test"'} <= set(metadata)
    assert f"{info}/licenses/LICENSE" in wheel.namelist()
    assert {n.split("/")[0] for n in wheel.namelist()} == {info, next(
        n for n in wheel.namelist() if n.startswith("cmake_example.") and n.endswith(".so"))}
    entry_points = configparser.ConfigParser(delimiters="=")
    entry_points.read_string(wheel.read(f"{info}/entry_points.txt").decode())
    assert {section: dict(entry_points[section]) for section in entry_points.sections()} == {
        "console_scripts": {"something": "other:callme"}, "gui_scripts": {"guithing": "a.b:c"},
        "one.two": {"three": "four"}}
    wheel_file = wheel.read(f"{info}/WHEEL").decode().splitlines()
    assert {"Wheel-Version: 1.0", "Root-Is-Purelib: false"} <= set(wheel_file)


# --- cmake_defines: configure only -------------------------------------------------

def test_cmake_defines_configure_only(samples: Path, tmp_path: Path) -> None:
    """`CMAKE_ONLY=1 buildkit build` configures the sample; its log is what
    scikit-build-core's test_cmake_config.py expects: lists keep their items, an
    escaped ';' stays inside one."""
    project = apply_port(samples, DEFINES_PORT, tmp_path / "cmake_defines")
    run([sys.executable, "-m", "buildkit", "build", project], cwd=tmp_path, env=clean_env(CMAKE_ONLY="1"))
    assert (build_folder(project) / "log.txt").read_text() == (
        "ONE_LEVEL_LIST.LENGTH = 4\nFoo\nBar\nExceptionallyLargeListEntryThatWouldOverflowTheLine\nBaz\n"
        "NESTED_LIST.LENGTH = 3\nApple\nLemon;Lime\nBanana\n")
    assert not (build_folder(project) / ".ninja_log").exists(), "CMAKE_ONLY=1 built something"


# --- a namespace shared with another distribution ----------------------------------

SIBLINGS = "import myns.mypkg, myns.otherpkg; print(myns.mypkg.__version__, myns.otherpkg.value)"


def test_editable_namespace_beside_its_sibling(samples: Path, buildkit_venv: Path, wheelhouse: Path,
                                               tmp_path: Path) -> None:
    """test_pyproject_namespace.py's sibling check: an editable install of namespace_purelib_package
    (`myns.mypkg`, by `pip install -e` and by `buildkit develop`) must not hide `myns.otherpkg`,
    another distribution of the namespace `myns` installed normally.  Neither compiles anything."""
    editable = apply_port(samples, PORTS["namespace_purelib_package"], tmp_path / "namespace_purelib_package")
    sibling = apply_port(samples, SIBLING_PORT, tmp_path / "namespace_sibling_package")
    env = venv_env(buildkit_venv, wheelhouse)
    pip = [buildkit_venv, "-m", "pip"]
    neutral = tmp_path / "neutral"
    neutral.mkdir()
    try:
        run([*pip, "install", "-q", "--no-build-isolation", sibling], env=env)
        run([*pip, "install", "-q", "--no-build-isolation", "-e", editable], env=env)
        assert run([buildkit_venv, "-c", SIBLINGS], cwd=neutral, env=env).stdout.strip() == "1.2.3 sibling"
        run([*pip, "uninstall", "-y", "-q", "myns.mypkg"], env=env)
        run([buildkit_venv, "-m", "buildkit", "develop", editable], env=env)
        assert run([buildkit_venv, "-c", SIBLINGS], cwd=neutral, env=env).stdout.strip() == "1.2.3 sibling"
    finally:
        run([*pip, "uninstall", "-y", "-q", "myns.mypkg", "myns.otherpkg"], env=env, check=False)
