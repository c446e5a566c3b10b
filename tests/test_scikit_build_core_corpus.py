"""scikit-build-core's own sample packages, ported to buildkit by configuration.

Every sample of scikit-build-core 1.1.2's ``tests/packages`` builds here, except the
ones that test its own plugins and fallbacks (``skbuild_corpus.EXCLUDED``; the migration
guide says what a buildkit user does instead).  Each comes unmodified from the pinned
sdist; its port (``buildkit_testing.skbuild_ports``) is everything a user changes, each
change with its reason (docs/migration/from-scikit-build-core.md tabulates them).  The
buildkit wheel, built by pip in an isolated environment from the local wheelhouse, is
compared file by file with the wheel scikit-build-core builds from the sample: its file
list and tag, written down by ``python -m buildkit_testing.skbuild_reference`` in
tests/data/skbuild_reference/ (so this run builds buildkit's side only).  pip builds it
in a venv holding the port's build requirements, or in an isolated environment of its
own (``simple_pyproject_ext``, ``custom_cmake``: pybind11's CMake files and another
distribution's CMake entry points found in pip's build environment).  Every
difference is listed with its reason (``skbuild_expected.EXPECTED``), and the actual
difference must equal the list.  Then the wheel installs into a fresh venv and passes
what scikit-build-core's own tests check of the sample (``skbuild_expected.CHECKS``);
the samples about sdists, config settings, build types and editable installs get the
rest of their tests below.

The default run builds the thirteen samples in ``DEFAULT``; the others carry the ``corpus``
marker: ``pytest -m corpus tests/test_scikit_build_core_corpus.py`` (docs/ci.md).  Cython
and hatchling come from the package index (once, cached in .corpus-cache/); the Fortran
sample skips where gfortran is missing.
"""

from __future__ import annotations

import configparser
import json
import shutil
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from buildkit_testing.artifacts import only_wheel
from buildkit_testing.paths import REPO, build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.skbuild_corpus import (
    EXCLUDED,
    IndexUnreachable,
    Interpreter,
    apply_port,
    corpus_build_wheels,
    sample_packages,
)
from buildkit_testing.skbuild_expected import BUILDS, CHECKS, EXPECTED, SDISTS, Build
from buildkit_testing.skbuild_ports import PORTS, SIBLING_PORT
from buildkit_testing.skbuild_reference import data_file
from buildkit_testing.skbuild_reference import samples as reference_samples
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, pip_into, venv_env

pytestmark = pytest.mark.slow
GUIDE = REPO / "docs" / "migration" / "from-scikit-build-core.md"

# The default run: six of the seven samples first ported, the four without CMake (cmake = false:
# no compiler runs), and the three whose port found a buildkit defect (simple_pure: a folder at
# the wheel's root; filepath_pure: SKBUILD_PLATLIB_DIR as a destination, an empty script;
# config_settings: a config setting that nothing reads).  simple_pyproject_ext, the seventh,
# builds pybind11 in pip's isolated environment (a fifth of this file's default time); its
# twin simple_pyproject_source_dir builds the same module in the default run.
DEFAULT = ("simplest_c", "navigate_editable", "cmake_generated", "importlib_editable",
           "simple_pyproject_source_dir", "cmake_defines", "generate_include", "simple_purelib_package",
           "namespace_purelib_package", "pep639_pure", "simple_pure", "filepath_pure", "config_settings")
SAMPLES = [name if name in DEFAULT else pytest.param(name, marks=pytest.mark.corpus) for name in PORTS]

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


@dataclass(frozen=True)
class Built:
    project: Path  # the ported copy, with its kept build folder
    wheel: Path
    needs: tuple[Path, ...]  # the wheels of the samples it was built against, installed with it


# --- fixtures ----------------------------------------------------------------------

@pytest.fixture(scope="session")
def samples() -> Path:
    try:
        return sample_packages()
    except IndexUnreachable as error:
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def corpus_house(wheelhouse: Path, tmp_path_factory) -> Path:
    """The run's wheelhouse, linked into a folder of this module's own that the builds add
    to: Cython or hatchling from the cache, a wheel another sample builds against."""
    house = tmp_path_factory.mktemp("corpus-wheelhouse")
    for wheel in wheelhouse.glob("*.whl"):
        (house / wheel.name).symlink_to(wheel)
    return house


def _add_to(house: Path, wheels: Path) -> None:
    for wheel in wheels.glob("*.whl"):
        if not (house / wheel.name).exists():
            (house / wheel.name).symlink_to(wheel)


@pytest.fixture(scope="module")
def buildkit_wheel(samples: Path, corpus_house: Path, tmp_path_factory) -> Callable[..., Built]:
    """``buildkit_wheel(name, build=None)``: the wheel pip builds from the ported sample, as
    ``BUILDS`` (or ``build``) says; built once per module and recipe.  A build runs in one
    venv of the module's, into which pip first installs the port's ``[build-system]
    requires`` (a fresh isolated environment per build costs 8 s of CPU more; the samples
    whose recipe says ``isolated`` get one)."""
    built: dict[str, Built] = {}
    python = make_venv(tmp_path_factory.mktemp("build-venv") / "venv", with_pip=False)

    def build(name: str, recipe: Build | None = None) -> Built:
        recipe = recipe or BUILDS.get(name, Build())
        key = f"{name} {recipe}"
        if key in built:
            return built[key]
        if recipe.tool and shutil.which(recipe.tool) is None:
            pytest.skip(f"{name} needs {recipe.tool}, which is not on PATH (.ci/run installs it)")
        try:
            for download in recipe.downloads:
                _add_to(corpus_house, corpus_build_wheels(download))
        except IndexUnreachable as error:
            pytest.skip(str(error))
        needs = tuple(build(first).wheel for first in recipe.first)
        for wheel in needs:
            shutil.copy2(wheel, corpus_house)
        folder = tmp_path_factory.mktemp(name.replace("/", "-"))
        for helper in recipe.helpers:  # custom_cmake/extern: a hatchling project with CMake entry points
            source = shutil.copytree(samples / name / helper, folder / "helpers" / helper)
            pip_into(python, corpus_house, "wheel", "-q", "--no-deps", "-w", corpus_house, source, cwd=folder)
        project = apply_port(samples, PORTS[name], folder / name.replace("/", "-"))
        isolation: list[str | Path] = []
        if not recipe.isolated:
            requires = tomllib.loads((project / "pyproject.toml").read_text())["build-system"]["requires"]
            pip_into(python, corpus_house, "install", "-q", *BUILDKIT_WITH_TOOLS, "setuptools", "wheel", *requires,
                     cwd=folder)
            isolation = ["--no-build-isolation"]
        settings = [f"--config-settings={key}={value}" for key, value in recipe.config_settings.items()]
        pip_into(python, corpus_house, "wheel", "-q", "--no-deps", *isolation, "-w", folder / "dist", *settings,
                 project, cwd=folder, **recipe.env)
        built[key] = Built(project, only_wheel(folder / "dist"), needs)
        return built[key]

    return build


def reference(name: str) -> dict:
    return json.loads(data_file(name).read_text())


def wheel_contents(wheel: Path) -> set[str]:
    return {name for name in zipfile.ZipFile(wheel).namelist() if not name.endswith("/")}


def installed_checks(python: Path, house: Path, folder: Path, wheels: list[Path], codes: list[str]) -> list[str]:
    """What each check printed in a fresh venv with ``wheels`` installed (from ``house``)."""
    pip_into(python, house, "install", "-q", *wheels)
    return json.loads(run([python, "-c", CHECK_RUNNER, json.dumps(codes)], cwd=folder, env=clean_env()).stdout)


# --- every sample: the wheel, and what scikit-build-core's tests check of it -------

@pytest.mark.parametrize("name", SAMPLES)
def test_wheel_holds_what_scikit_build_cores_does(name: str, buildkit_wheel) -> None:
    ours, theirs, expected = buildkit_wheel(name).wheel, reference(name)["wheel"], EXPECTED[name]
    interpreter = Interpreter.current()
    ours_files = {interpreter.normalised(path) for path in wheel_contents(ours)}
    their_files = set(theirs["files"])
    assert {"only in buildkit's": sorted(ours_files - their_files),
            "only in scikit-build-core's": sorted(their_files - ours_files)} == {
        "only in buildkit's": sorted(expected.only_buildkit), "only in scikit-build-core's": sorted(
            expected.only_skbuild)}
    their_tag = "-".join(theirs["name"][: -len(".whl")].split("-")[-3:])
    ours_tag = "-".join(interpreter.normalised(ours.name)[: -len(".whl")].split("-")[-3:])
    assert ours_tag == (expected.tag[0] if expected.tag else their_tag)


@pytest.mark.parametrize("name", SAMPLES)
def test_wheel_passes_the_samples_own_checks(name: str, buildkit_wheel, corpus_house: Path, tmp_path: Path) -> None:
    built = buildkit_wheel(name)
    python = make_venv(tmp_path / "venv", with_pip=False)
    codes = [code for code, _ in CHECKS[name]]
    printed = installed_checks(python, corpus_house, tmp_path, [*built.needs, built.wheel], codes)
    assert dict(zip(codes, printed, strict=True)) == dict(CHECKS[name])


# --- the samples' other tests -----------------------------------------------------

@pytest.mark.parametrize("name", [pytest.param("simple_pyproject_ext", marks=pytest.mark.corpus),
                                  "simple_pyproject_source_dir"])
def test_cmake_example_metadata(name: str, buildkit_wheel) -> None:
    """What test_pyproject_pep517.py checks of the two samples' wheel metadata."""
    wheel = zipfile.ZipFile(buildkit_wheel(name).wheel)
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


def configure_log(built: Built) -> str:
    return (build_folder(built.project) / ".buildkit" / "logs" / "configure.log").read_text()


def test_cmake_defines_lists_reach_cmake(buildkit_wheel) -> None:
    """test_cmake_config.py: lists keep their items, an escaped ';' stays inside one."""
    built = buildkit_wheel("cmake_defines")
    assert (build_folder(built.project) / "log.txt").read_text() == (
        "ONE_LEVEL_LIST.LENGTH = 4\nFoo\nBar\nExceptionallyLargeListEntryThatWouldOverflowTheLine\nBaz\n"
        "NESTED_LIST.LENGTH = 3\nApple\nLemon;Lime\nBanana\n")


@pytest.mark.parametrize(("recipe", "logged"), [
    (Build(), "ZMQ_PREFIX = \nZMQ_LIBZMQ = system\n"),
    (Build(config_settings={"ZMQ_PREFIX": "/opt/zmq", "ZMQ_LIBZMQ": "bundled"}),
     "ZMQ_PREFIX = /opt/zmq\nZMQ_LIBZMQ = bundled\n"),
    (Build(env={"ZMQ_PREFIX": "/opt/zmq"}, config_settings={"ZMQ_LIBZMQ": "bundled"}),
     "ZMQ_PREFIX = /opt/zmq\nZMQ_LIBZMQ = bundled\n"),
], ids=["default", "conf", "env"])
def test_config_settings_reach_cmake(buildkit_wheel, recipe: Build, logged: str) -> None:
    """test_config_settings.py::test_config_settings_reach_cmake, and its default and unset values."""
    built = buildkit_wheel("config_settings", recipe)
    assert (build_folder(built.project) / "log.txt").read_text() == logged


@pytest.mark.corpus
def test_multi_build_type_one_configuration_by_config_setting(buildkit_wheel) -> None:
    """test_multi_build_type.py::test_multi_build_type_override_single, with the other type."""
    names = wheel_contents(buildkit_wheel("multi_build_type", Build(config_settings={"build-type": "Debug"})).wheel)
    assert "multi_build_type/Debug/marker.txt" in names and "multi_build_type/Release/marker.txt" not in names


def test_simple_pure_sees_skbuild(buildkit_wheel) -> None:
    """test_simple_pure.py::test_variable_defined: SKBUILD is defined (scikit-build-core's value, 2)."""
    assert "SKBUILD is defined to 2" in configure_log(buildkit_wheel("simple_pure"))


# --- sdists -------------------------------------------------------------------------

def buildkit_sdist(project: Path, out: Path) -> Path:
    run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", out, project], cwd=project.parent,
        env=clean_env())
    (sdist,) = out.glob("*.tar.gz")
    return sdist


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(SDISTS))
def test_sdist_holds_what_scikit_build_cores_does(name: str, samples: Path, tmp_path: Path) -> None:
    """test_setuptools_pep517.py's and test_pyproject_pep518.py's sdist tests: the file list
    against scikit-build-core's, every difference with its reason, and the metadata they check."""
    sdist = buildkit_sdist(apply_port(samples, PORTS[name], tmp_path / name), tmp_path / "dist")
    theirs, expected = reference(name)["sdist"], SDISTS[name]
    assert sdist.name == theirs["name"]
    with tarfile.open(sdist) as archive:
        ours = {m.name for m in archive.getmembers() if not m.isdir()}
        pkg_info = archive.extractfile(f"{sdist.name[: -len('.tar.gz')]}/PKG-INFO").read().decode()
    assert {"only in buildkit's": sorted(ours - set(theirs["files"])),
            "only in scikit-build-core's": sorted(set(theirs["files"]) - ours)} == {
        "only in buildkit's": sorted(expected.only_buildkit), "only in scikit-build-core's": sorted(
            expected.only_skbuild)}
    assert set(expected.metadata) <= set(pkg_info.splitlines())


@pytest.mark.corpus
def test_sdist_config_wheel_from_its_sdist(samples: Path, corpus_house: Path, tmp_path: Path) -> None:
    """test_pyproject_pep518.py::test_pep518_wheel_sdist_with_cmake_config, sdist to wheel:
    the wheel built from buildkit's sdist holds the same files and passes the same checks."""
    sdist = buildkit_sdist(apply_port(samples, PORTS["sdist_config"], tmp_path / "sdist_config"), tmp_path / "sd")
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, corpus_house, "wheel", "-q", "--no-deps", "-w", tmp_path / "dist", sdist, cwd=tmp_path)
    wheel = only_wheel(tmp_path / "dist")
    interpreter = Interpreter.current()
    expected = set(reference("sdist_config")["wheel"]["files"]) | set(EXPECTED["sdist_config"].only_buildkit)
    assert {interpreter.normalised(path) for path in wheel_contents(wheel)} == expected
    codes = [code for code, _ in CHECKS["sdist_config"]]
    assert dict(zip(codes, installed_checks(python, corpus_house, tmp_path, [wheel], codes), strict=True)) == dict(
        CHECKS["sdist_config"])


# --- editable installs --------------------------------------------------------------

@pytest.mark.corpus
def test_cython_pxd_editable(buildkit_wheel, samples: Path, corpus_house: Path, tmp_path: Path) -> None:
    """test_editable.py::test_cython_pxd: pkg1, then pkg2 (which cimports pkg1's .pxd), installed
    editable in that order; pkg2's module imports pkg1's and takes its function."""
    buildkit_wheel("cython_pxd_editable/pkg2")  # pkg1's wheel in the wheelhouse: pkg2's build requirement
    python = make_venv(tmp_path / "venv", with_pip=False)
    for name in ("cython_pxd_editable/pkg1", "cython_pxd_editable/pkg2"):
        project = apply_port(samples, PORTS[name], tmp_path / name.split("/")[1])
        pip_into(python, corpus_house, "install", "-q", "-e", project, cwd=tmp_path)
    codes = [code for code, _ in CHECKS["cython_pxd_editable/pkg2"]]
    printed = json.loads(run([python, "-c", CHECK_RUNNER, json.dumps(codes)], cwd=tmp_path, env=clean_env()).stdout)
    assert printed == ["True"]


@pytest.mark.corpus
def test_simple_setuptools_ext_editable(samples: Path, corpus_house: Path, tmp_path: Path) -> None:
    """test_setuptools_pep517.py::test_pep517_editable: an editable install that imports and
    runs the module built in place (scikit-build-core's editable.mode = "inplace")."""
    project = apply_port(samples, PORTS["simple_setuptools_ext"], tmp_path / "simple_setuptools_ext")
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, corpus_house, "install", "-q", "-e", project, cwd=tmp_path)
    codes = [code for code, _ in CHECKS["simple_setuptools_ext"]]
    code = "import cmake_example, pathlib; print(pathlib.Path(cmake_example.__file__).parent)"
    printed = json.loads(run([python, "-c", CHECK_RUNNER, json.dumps([*codes, code])], cwd=tmp_path,
                             env=clean_env()).stdout)
    assert printed == [*(out for _, out in CHECKS["simple_setuptools_ext"]), str(project)]


def test_every_sample_is_ported_or_excluded(samples: Path) -> None:
    """The corpus is whole: every sample not excluded has reference data and a port (but the
    hatchling project that only shares a namespace), and every port has its expectations."""
    assert sorted(set(reference_samples(samples)) - set(PORTS)) == [SIBLING_PORT.name]
    assert [name for name in reference_samples(samples) if not data_file(name).is_file()] == []
    assert set(PORTS) == set(EXPECTED) == set(CHECKS)
    assert sorted(p.name for p in samples.iterdir() if p.is_dir()) == sorted(
        {name.split("/")[0] for name in reference_samples(samples)} | set(EXCLUDED))


# --- a namespace shared with another distribution ----------------------------------

SIBLINGS = "import myns.mypkg, myns.otherpkg; print(myns.mypkg.__version__, myns.otherpkg.value)"


@pytest.mark.corpus  # no compile, but two pip installs and a develop: 16 s of the default run
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


# --- the migration guide says what the ports do -------------------------------------

def guide_rows(heading: str) -> list[list[str]]:
    """The cells of the first table under ``heading`` in the migration guide, less its header."""
    section = GUIDE.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1]
    table = section[section.index("\n|") + 1:].split("\n\n", 1)[0].splitlines()
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table[2:]]


def test_the_guide_lists_every_port_with_its_lines() -> None:
    rows = {cells[0].split("`")[1]: cells for cells in guide_rows("What each port needed")}
    rows["cython_pxd_editable/pkg2"] = rows["cython_pxd_editable/pkg1"]  # one row: "`.../pkg1`, `/pkg2`"
    assert sorted(rows) == sorted(PORTS)
    assert {name: int(cells[-1]) for name, cells in rows.items()} == {
        name: port.config_lines() for name, port in PORTS.items()}
    assert sorted(name for name, cells in rows.items() if "†" in cells[0]) == sorted(DEFAULT)


def test_the_guide_says_what_to_do_instead_of_each_excluded_sample() -> None:
    assert sorted(cells[0].strip("`") for cells in guide_rows("The samples not ported")) == sorted(EXCLUDED)


def test_the_guides_settings_table_has_every_key_the_samples_use(samples: Path) -> None:
    def keys(table: dict, prefix: str = "") -> set[str]:
        found = set()
        for key, value in table.items():
            dotted = prefix + key
            nested = isinstance(value, dict) and dotted not in ("cmake.define", "config-setting")
            found |= keys(value, dotted + ".") if nested else {dotted}
        return found

    used = set().union(*(keys(tomllib.loads(pyproject.read_text()).get("tool", {}).get("scikit-build", {}))
                         for name in PORTS for pyproject in [samples / name / "pyproject.toml"]
                         if pyproject.exists()))
    covered = " ".join(cells[0] for cells in guide_rows("Settings side by side"))
    assert sorted(key for key in used if f"`{key}" not in covered) == []
