"""``build-type = ["Release", "Debug"]``: every type of the list built, each in a build folder of
its own, and installed into one package tree or wheel (scikit-build-core's list of
``cmake.build-type``; tests/packages/build_types).  One develop build is shared by the module:
each test leaves the project developed with both types, ``clean`` goes last."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit._util.interpreter import soabi
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit.errors import ConfigError
from buildkit_testing.processes import clean_env, run
from buildkit_testing.projects import write_pyproject
from buildkit_testing.venvs import overlay_venv

PRIMARY_ONLY = "Release/config.txt", "lib/libflavour.so"
DEBUG_ONLY = "Debug/config.txt", "lib/libflavour_d.so"


# --- the list as an option ----------------------------------------------------------

def options_of(tmp_path: Path, value: str, environ: dict[str, str] | None = None,
               config_settings: dict[str, str] | None = None):
    settings = load_settings(write_pyproject(tmp_path, f"build-type = {value}\n"), option_keys())
    return load_options(settings, environ or {}, config_settings)


def test_the_first_type_is_the_primary_and_pins_the_build_folder(tmp_path: Path) -> None:
    options = options_of(tmp_path, '["release", "Debug", "MinSizeRel"]')
    assert (options.default_build_type, options.extra_build_types) == ("Release", ("Debug", "MinSizeRel"))
    # A cache another command left on Debug: the list's first type is the primary folder's.
    assert options.resolve_build_type("Debug") == "Release" and options.dropped_build_types_note() is None
    assert options_of(tmp_path, '["Debug"]').extra_build_types == ()


@pytest.mark.parametrize(("value", "message"), [
    ("[]", r"\[tool.buildkit\] build-type is an empty list"),
    ('["Release", "Fast"]', r"build-type\[1\]='Fast' is not a CMake build type"),
    ('["Release", 3]', r"build-type\[1\] must be a build type, not 3"),
    ('["Release", "Debug", "release"]', r"names the build type Release twice \(.*build-type\[2\] is 'release'\)"),
], ids=["empty", "unknown", "not-a-string", "twice"])
def test_a_bad_list_is_refused(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        options_of(tmp_path, value)


@pytest.mark.parametrize(("environ", "config_settings", "asked"), [
    ({"CMAKE_BUILD_TYPE": "Debug"}, {}, "CMAKE_BUILD_TYPE=Debug (environment)"),
    ({"DEBUG": "1"}, {}, "DEBUG=1 (environment)"),
    ({"CMAKE_BUILD_TYPE": "Release"}, {"build-type": "Debug"}, "CMAKE_BUILD_TYPE=Debug (config setting)"),
], ids=["variable", "DEBUG", "config-setting"])
def test_one_type_asked_for_drops_the_others_by_name(tmp_path: Path, environ, config_settings, asked) -> None:
    options = options_of(tmp_path, '["Release", "Debug"]', environ, config_settings)
    assert options.extra_build_types == () and options.resolve_build_type("Release") == "Debug"
    assert options.dropped_build_types_note() == (
        f"[tool.buildkit] build-type lists Release, Debug, but {asked} asks for one build type: building Debug "
        "only, not Release. Unset it to build every type of the list.")


# --- built ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def project(test_package, tmp_path_factory) -> Path:
    return test_package("build_types")


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> Path:
    return overlay_venv(tmp_path_factory.mktemp("venv") / "venv")  # `develop` registers there


@pytest.fixture(scope="module")
def first_develop(project: Path, python: Path) -> str:
    return develop(project, python)


def develop(project: Path, python: Path, **env: str) -> str:
    return run([python, "-m", "buildkit", "develop", project], cwd=project, env=clean_env(**env)).stderr


def build_folder(project: Path) -> Path:
    return project / "build" / soabi()


def installed(project: Path) -> dict[str, str]:
    """The package tree's files CMake installed, by path below the package: their content for
    the configured files, their mtime and ctime for the libraries.  The ctime too: the
    mtime is the install's own time (builder/install/times.py), and ctime catches a library
    installed twice within the clock's tick."""
    package = project / "build_types"
    return {path.relative_to(package).as_posix(): (path.read_text() if path.suffix == ".txt"
                                                    else f"{path.stat().st_mtime_ns} {path.stat().st_ctime_ns}")
            for path in sorted(package.rglob("*")) if path.is_file() and path.suffix in (".txt", ".so")}


def cached_build_type(build_dir: Path) -> str:
    (line,) = [line for line in (build_dir / "CMakeCache.txt").read_text().splitlines()
               if line.startswith("CMAKE_BUILD_TYPE:")]
    return line.split("=", 1)[1]


def test_develop_builds_each_type_in_its_own_folder_into_one_tree(project: Path, first_develop: str) -> None:
    files = installed(project)
    assert set(files) == {*PRIMARY_ONLY, *DEBUG_ONLY}, first_develop
    assert (files["Release/config.txt"], files["Debug/config.txt"]) == ("Release\n", "Debug\n")
    folder = build_folder(project)
    assert cached_build_type(folder) == "Release"
    assert cached_build_type(folder / "build-types" / "Debug") == "Debug"
    # The project's compile_commands.json is the primary build's.
    commands = json.loads((project / "compile_commands.json").read_text())
    assert {entry["directory"] for entry in commands} == {str(folder)}


def test_the_next_develop_is_a_no_op_and_an_edit_rebuilds_every_type(project: Path, python: Path,
                                                                     first_develop: str) -> None:
    before = installed(project)
    output = develop(project, python)
    assert "up to date" in output and "configuring" not in output and "compiling" not in output, output
    assert installed(project) == before
    # Only the Debug build's install is out of date: the no-op's first stage sees it too.
    (project / "build_types" / "Debug" / "config.txt").unlink()
    output = develop(project, python)
    assert installed(project)["Debug/config.txt"] == "Debug\n", output
    with (project / "flavour.c").open("a") as source:
        source.write("/* edited */\n")
    output = develop(project, python)
    assert output.count("done in") == 2 and "configuring" not in output, output  # one summary per type
    assert "(Debug build)" in output
    after = installed(project)
    assert all(after[lib] != before[lib] for lib in ("lib/libflavour.so", "lib/libflavour_d.so")), output
    assert "up to date" in develop(project, python)


def test_an_import_rebuilds_every_type(project: Path, python: Path, first_develop: str, tmp_path: Path) -> None:
    """editable-rebuild: the import's first stage sees an edit in any type's build."""
    develop(project, python, BUILDKIT_EDITABLE_REBUILD="1")  # registered with the rebuild on import
    before = installed(project)
    with (project / "flavour.c").open("a") as source:
        source.write("/* edited for the import */\n")
    importing = [python, "-c", "import build_types"]
    env = clean_env(BUILDKIT_EDITABLE_REBUILD="1")
    output = run(importing, cwd=tmp_path, env=env).stderr
    after = installed(project)
    assert all(after[lib] != before[lib] for lib in ("lib/libflavour.so", "lib/libflavour_d.so")), output
    assert run(importing, cwd=tmp_path, env=env).stderr == ""  # the next import's first stage: nothing to do
    develop(project, python)  # registered as the other tests expect: no rebuild on import


def build_wheel(project: Path, out: Path, **config_settings: str) -> tuple[set[str], str]:
    code = ("import sys, json; from buildkit import build_meta; "
            "print(build_meta.build_wheel(sys.argv[1], json.loads(sys.argv[2])))")
    result = run([sys.executable, "-c", code, out, json.dumps(config_settings)], cwd=project, env=clean_env())
    with zipfile.ZipFile(out / result.stdout.strip().splitlines()[-1]) as wheel:
        return {name.removeprefix("build_types/") for name in wheel.namelist()}, result.stderr


def test_a_wheel_holds_every_type_and_one_type_asked_for_drops_the_others(project: Path, python: Path,
                                                                          first_develop: str,
                                                                          tmp_path: Path) -> None:
    names, _ = build_wheel(project, tmp_path / "both")
    assert {*PRIMARY_ONLY, *DEBUG_ONLY} <= names
    # The same staging tree, Release asked for: Debug's files, staged by the wheel before, are taken out.
    names, output = build_wheel(project, tmp_path / "release", **{"build-type": "Release"})
    assert set(PRIMARY_ONLY) <= names and not set(DEBUG_ONLY) & names, output
    assert "building Release only, not Debug" in output
    assert "removed the 2 file(s) that the Debug build installed into" in output, output
    # A new staging tree: what the Debug develop build installed into the package is no source to stage.
    shutil.rmtree(build_folder(project) / "wheel-staging")
    names, output = build_wheel(project, tmp_path / "again", **{"build-type": "Release"})
    assert set(PRIMARY_ONLY) <= names and not set(DEBUG_ONLY) & names, output


def test_a_variable_asking_for_one_type_builds_it_alone(project: Path, python: Path, first_develop: str) -> None:
    output = develop(project, python, CMAKE_BUILD_TYPE="Debug")
    assert "CMAKE_BUILD_TYPE=Debug (environment) asks for one build type: building Debug only, not Release" in output
    assert set(installed(project)) == set(DEBUG_ONLY), output
    output = develop(project, python)
    assert set(installed(project)) == {*PRIMARY_ONLY, *DEBUG_ONLY}, output


def test_two_types_installing_one_path_keep_the_later_and_say_so(project: Path, python: Path,
                                                                 first_develop: str) -> None:
    output = develop(project, python, CMAKE_ARGS="-DBUILD_TYPES_CLASH=ON")
    clash = project / "build_types" / "clash.txt"
    assert "the Release and Debug builds both install" in output and str(clash) in output, output
    assert "the Debug build's copy is kept" in output and clash.read_text() == "Debug\n"
    develop(project, python, CMAKE_ARGS="-DBUILD_TYPES_CLASH=OFF")  # the cache keeps what -D set
    assert not clash.exists()


def test_a_types_folder_is_cleared_of_obstacles_as_the_build_folder_is(project: Path, python: Path,
                                                                        first_develop: str) -> None:
    record = build_folder(project) / "build-types" / "Debug" / ".buildkit" / "configure.json"
    record.unlink()
    record.mkdir()  # a folder where the Debug build's configure record belongs
    output = develop(project, python)
    assert f"removed {record}: a folder stood where buildkit keeps a file" in output, output
    assert "no record of a finished configure" in output and record.is_file()
    assert "up to date" in develop(project, python)
    types_folder = build_folder(project) / "build-types"
    shutil.rmtree(types_folder)
    types_folder.write_text("")  # a file where the folder of the types' folders belongs
    output = develop(project, python)
    assert f"removed {types_folder}: no folder stood where" in output, output
    assert set(installed(project)) == {*PRIMARY_ONLY, *DEBUG_ONLY}


def test_clean_removes_every_types_folder_and_files(project: Path, python: Path, first_develop: str) -> None:
    assert (build_folder(project) / "build-types" / "Debug").is_dir()
    run([python, "-m", "buildkit", "clean", project], cwd=project, env=clean_env())
    assert not build_folder(project).exists() and installed(project) == {}
