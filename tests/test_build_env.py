"""The build environment's CMake packages: found where find_package looks, named by the
``cmake.prefix``/``cmake.module`` entry points, and mirrored into the build folder so that
an isolated build's throw-away paths and fresh mtimes never reach a compile line."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from buildkit.builder.configure import build_env
from buildkit.builder.driver import CMakeDriver
from buildkit.builder.toolchain import tools as toolchain
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.projects import DEMO_PROJECT, write_files

ENTRY_POINTS = "[cmake.prefix]\ndemo = demo.prefix\n\n[cmake.module]\ndemo = demo.modules\n"


def fake_environment(site: Path) -> Path:
    """A site-packages with a pybind11-style and a nanobind-style CMake package, one named by
    entry points only, a library, and two folders that are not CMake packages."""
    write_files(site, {
        "pyb/__init__.py": "", "pyb/include/pyb/pyb.h": "#define PYB 1\n",
        "pyb/share/cmake/pyb/pybConfig.cmake": "set(pyb_FOUND 1)\n",
        "pyb/share/cmake/pyb/__pycache__/x.pyc": "",
        "nb/cmake/nb-config.cmake": "set(nb_FOUND 1)\n", "nb/src/nb.cpp": "int nb();\n",
        "nb/lib/libnb.so": "ELF",
        "demo/__init__.py": "", "demo/prefix/demo-config.cmake": "include(DemoHelpers)\nset(demo_FOUND 1)\n",
        "demo/modules/DemoHelpers.cmake": "set(DEMO_HELPERS_LOADED ON)\n",
        "demo-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        "demo-1.0.dist-info/entry_points.txt": ENTRY_POINTS,
        # Another package's config beside it: find_package(other) never looks in plain/.
        "plain/__init__.py": "", "plain/cmake/otherConfig.cmake": "",
        # find_package(ExampleRoot) never looks in example_root/ either: only its cmake.root
        # entry point (ExampleRoot_ROOT) leads there, as in scikit-build-core's custom_cmake sample.
        "example_root/__init__.py": "", "example_root/ExampleRootConfig.cmake": "set(ExampleRoot_FOUND 1)\n",
        "example_root-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: example-root\nVersion: 1.0\n",
        "example_root-1.0.dist-info/entry_points.txt": "[cmake.root]\nExampleRoot = example_root\n",
    })
    return site


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = fake_environment(tmp_path / "env-1" / "site-packages")
    monkeypatch.setattr(sys, "path", [str(folder)])
    return folder


def test_packages_and_entry_points_are_found_where_cmake_looks(site: Path, tmp_path: Path) -> None:
    env = build_env.scan(tmp_path / "build", tmp_path / "project")
    mirror = tmp_path / "build" / "build-env"
    assert env.site_dirs == [str(site)]
    assert env.packages == {name: str(site / name) for name in ("demo", "example_root", "nb", "pyb")}
    assert env.prefix_path() == [str(mirror), str(mirror / "demo" / "prefix"), str(site)]
    assert env.module_path() == [str(mirror / "demo" / "modules")]
    assert env.root_defines() == {"ExampleRoot_ROOT": str(mirror / "example_root")}


def test_the_project_and_folders_inside_a_site_folder_are_not_the_environment(
        site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    write_files(project, {"src/x-1.0.dist-info/METADATA": "", ".venv/lib/site-packages/y.py": ""})
    vendored = site / "setuptools" / "_vendor"
    write_files(vendored, {"z-1.0.dist-info/METADATA": ""})
    monkeypatch.setattr(sys, "path", ["", str(project / "src"), str(site), str(vendored),
                                      str(project / ".venv" / "lib" / "site-packages")])
    monkeypatch.chdir(project)
    assert build_env.site_dirs(project) == [str(site), str(project / ".venv" / "lib" / "site-packages")]


def mtimes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.lstat().st_mtime_ns for p in folder.rglob("*") if not p.is_dir()}


def test_a_new_environment_with_the_same_files_rewrites_nothing(
        site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = tmp_path / "build"
    assert build_env.sync_mirror(build_env.scan(build, tmp_path), build) == 11  # example_root: 2 files
    mirror = build / "build-env"
    assert (mirror / "pyb" / "include" / "pyb" / "pyb.h").read_text() == "#define PYB 1\n"
    assert not (mirror / "pyb" / "share" / "cmake" / "pyb" / "__pycache__").exists()
    assert os.readlink(mirror / "nb" / "lib" / "libnb.so") == str(site / "nb" / "lib" / "libnb.so")
    assert not (mirror / "plain").exists()
    before = mtimes(mirror)

    # What pip does for the next isolated build: the same files at a new path, with new mtimes.
    second = tmp_path / "env-2" / "site-packages"
    shutil.copytree(site, second)
    shutil.rmtree(site.parent)
    monkeypatch.setattr(sys, "path", [str(second)])
    env = build_env.scan(build, tmp_path)
    assert build_env.sync_mirror(env, build) == 1  # the library link points at the new folder
    after = mtimes(mirror)
    assert {name: t for name, t in after.items() if name != "nb/lib/libnb.so"} == \
        {name: t for name, t in before.items() if name != "nb/lib/libnb.so"}
    assert env.prefix_path()[:2] == [str(mirror), str(mirror / "demo" / "prefix")]

    # A changed header is rewritten, a deleted one goes, a package that left the environment goes.
    (second / "pyb" / "include" / "pyb" / "pyb.h").write_text("#define PYB 2\n")
    (second / "nb" / "src" / "nb.cpp").unlink()
    shutil.rmtree(second / "demo")
    shutil.rmtree(second / "demo-1.0.dist-info")
    assert build_env.sync_mirror(build_env.scan(build, tmp_path), build) == 1
    assert (mirror / "pyb" / "include" / "pyb" / "pyb.h").read_text() == "#define PYB 2\n"
    assert not (mirror / "nb" / "src").exists() and not (mirror / "demo").exists()


def test_an_unchanged_environment_is_not_scanned_again(site: Path, tmp_path: Path) -> None:
    build = tmp_path / "build"
    build_env.sync_mirror(build_env.scan(build, tmp_path), build)
    # Not a reinstall: site-packages itself is unchanged, so the recorded scan still stands.
    (site / "demo-1.0.dist-info" / "entry_points.txt").write_text("")
    assert build_env.scan(build, tmp_path).module_path() == [str(build / "build-env" / "demo" / "modules")]
    (site / "new-1.0.dist-info").mkdir()  # an install or uninstall changes the folder
    assert build_env.scan(build, tmp_path).module_path() == []


def test_an_entry_point_without_a_folder_is_reported(site: Path, tmp_path: Path, capsys) -> None:
    (site / "demo-1.0.dist-info" / "entry_points.txt").write_text("[cmake.prefix]\ngone = demo.gone\n")
    assert build_env.scan(tmp_path / "build", tmp_path).prefix_path()[1:] == [str(site)]
    assert "cmake.prefix entry point demo: gone = demo.gone names no module folder" in capsys.readouterr().err


def test_a_cmake_root_name_cmake_cannot_take_is_left_out_by_name(site: Path, tmp_path: Path, capsys) -> None:
    (site / "example_root-1.0.dist-info" / "entry_points.txt").write_text("[cmake.root]\nExample Root = example_root\n")
    assert build_env.scan(tmp_path / "build", tmp_path).root_defines() == {}
    assert "cmake.root entry point example-root: Example Root = example_root names no CMake package" in (
        capsys.readouterr().err)


def test_entry_point_modules_follow_the_users_module_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "default_cache_path", lambda: tmp_path / "toolchain-cache.json")
    settings = load_settings(write_files(tmp_path, DEMO_PROJECT), option_keys())
    options = load_options(settings, environ={"CMAKE_MODULE_PATH": "/mine"})
    driver = CMakeDriver(settings, options, install_prefix=tmp_path / "demo", module_path=["/env/modules"])
    command = driver.configure_command(driver._tools(), "Release")
    assert [arg for arg in command if arg.startswith("-DCMAKE_MODULE_PATH")] == ["-DCMAKE_MODULE_PATH=/mine;/env/modules"]
    assert driver.configure_inputs(None, "Release")["CMAKE_MODULE_PATH (entry points)"] == "/env/modules"


@pytest.mark.slow
def test_cmake_finds_the_environments_packages_in_the_mirror(tmp_path: Path, overlay_python: Path) -> None:
    site = fake_environment(tmp_path / "env" / "site-packages")
    project = tmp_path / "project"
    write_files(project, {
        "pyproject.toml": '[project]\nname = "finder"\nversion = "1.0"\n',
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.24)\nproject(finder NONE)\n"
                          "find_package(pyb CONFIG REQUIRED)\nfind_package(nb CONFIG REQUIRED)\n"
                          "find_package(demo CONFIG REQUIRED)\nfind_package(ExampleRoot CONFIG REQUIRED)\n"
                          "if(NOT DEMO_HELPERS_LOADED)\n  message(FATAL_ERROR \"cmake.module not used\")\nendif()\n"
                          "file(WRITE ${CMAKE_BINARY_DIR}/found.txt "
                          "\"${pyb_DIR}\\n${nb_DIR}\\n${demo_DIR}\\n${ExampleRoot_DIR}\\n\")\n",
    })
    run([overlay_python, "-m", "buildkit", "develop", project], cwd=project, env=clean_env(PYTHONPATH=str(site)))
    mirror = build_folder(project) / "build-env"
    assert (build_folder(project) / "found.txt").read_text().splitlines() == [
        str(mirror / "pyb" / "share" / "cmake" / "pyb"), str(mirror / "nb" / "cmake"), str(mirror / "demo" / "prefix"),
        str(mirror / "example_root")]
