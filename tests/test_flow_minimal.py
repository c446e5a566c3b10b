"""The documented flow on tests/packages/minimal, with the real cmake, ninja and gcc."""

from __future__ import annotations

import json
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from buildkit.project import Project
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, setup_py
from buildkit_testing.venvs import site_packages

pytestmark = pytest.mark.slow


def test_help_answers_without_building(test_package, overlay_python):
    minimal_project = test_package("minimal")
    result = setup_py(overlay_python, minimal_project, "--help")
    assert "usage" in result.stdout.lower()
    assert not (minimal_project / "build").exists()


def test_mode_conflict_stops_before_any_work(test_package, overlay_python):
    minimal_project = test_package("minimal")
    result = setup_py(overlay_python, minimal_project, "develop", check=False,
                      env=clean_env(BUILD_LIBTORCH_WHL="1", BUILD_PYTHON_ONLY="1"))
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "BUILD_LIBTORCH_WHL" in message and "BUILD_PYTHON_ONLY" in message and "Traceback" not in message
    assert not (minimal_project / "build").exists()


def test_bad_boolean_is_a_clear_error_without_traceback(test_package, overlay_python):
    minimal_project = test_package("minimal")
    result = setup_py(overlay_python, minimal_project, "build_ext", check=False, env=clean_env(DEBUG="maybe"))
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr and "Traceback" not in result.stderr


def test_setup_py_develop_builds_registers_and_reruns_as_a_no_op(test_package, overlay_python):
    minimal_project = test_package("minimal")
    setup_py(overlay_python, minimal_project, "develop")
    package = minimal_project / "minimal"
    assert (package / "lib" / "libminimal.so").is_file()
    assert (package / "include" / "minimal" / "minimal.h").is_file()
    assert (package / "share" / "cmake" / "Minimal" / "MinimalConfig.cmake").is_file()
    assert (minimal_project / "compile_commands.json").is_file()
    version_py = (package / "version.py").read_text()
    assert "__version__: str = '0.1.0'" in version_py

    # Imported from another folder: the editable registration, not the cwd, finds it.
    probe = "import minimal, json; print(json.dumps([minimal.sum([1, 2, 3.5]), minimal.__file__]))"
    total, location = json.loads(run([overlay_python, "-c", probe], cwd="/").stdout)
    assert total == 6.5 and Path(location).is_relative_to(minimal_project)
    assert "minimal 0.1.0" in run([overlay_python.parent / "minimal-info"]).stdout

    installed = sorted(p.stat().st_mtime_ns for p in (package / "lib").iterdir())
    second = setup_py(overlay_python, minimal_project, "develop")
    assert sorted(p.stat().st_mtime_ns for p in (package / "lib").iterdir()) == installed
    assert "registered editable install" not in second.stderr


def test_buildkit_develop_cli_no_op_and_uninstall(test_package, overlay_python):
    minimal_project = test_package("minimal")
    cli = [overlay_python, "-m", "buildkit", "develop", minimal_project]
    run(cli, env=clean_env())
    state = json.loads((build_folder(minimal_project) / ".buildkit" / "develop.json").read_text())
    assert state["inputs"]
    # A no-op run must not import setuptools at all.
    probe = ("import sys, runpy; sys.argv=['buildkit','develop',%r]; "
             "import buildkit.frontends.cli.main as c; rc=c.main(sys.argv[1:]); "
             "print('setuptools' in sys.modules, rc)") % str(minimal_project)
    assert run([overlay_python, "-c", probe], env=clean_env()).stdout.split()[-2:] == ["False", "0"]

    # A metadata change (a new console script) re-registers.
    pyproject = minimal_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        'scripts = [{ name = "minimal-info", target = "minimal.info:main" }]',
        'scripts = [{ name = "minimal-info", target = "minimal.info:main" }, '
        '{ name = "minimal-info2", target = "minimal.info:main" }]'))
    run(cli, env=clean_env())
    assert (overlay_python.parent / "minimal-info2").exists()

    site = site_packages(overlay_python)
    info = next(site.glob("minimal-*.dist-info"))
    direct_url = json.loads((info / "direct_url.json").read_text())
    assert direct_url["dir_info"] == {"editable": True} and direct_url["url"].startswith("file://")
    setup_py(overlay_python, minimal_project, "develop", "--uninstall")
    assert not list(site.glob("minimal-*.dist-info")) and not (overlay_python.parent / "minimal-info").exists()


def test_package_data_follows_cache_values(test_package, overlay_python, tmp_path):
    minimal_project = test_package("minimal")
    dist = tmp_path / "dist"
    # The wheel's egg_info lists no sources (the wheel has no SOURCES.txt); an sdist later
    # in the same run lists them all the same.
    setup_py(overlay_python, minimal_project, "bdist_wheel", "--dist-dir", dist, "sdist", "--dist-dir", dist,
             env=clean_env(BUILD_EXTRAS="ON"))
    with tarfile.open(next(dist.glob("minimal-0.1.0*.tar.gz"))) as sdist:
        sources = {member.name.split("/", 1)[-1] for member in sdist.getmembers()}
    assert {"csrc/minimal.cpp", "minimal/__init__.py", "CMakeLists.txt", "PKG-INFO"} <= sources
    wheel = next(dist.glob("minimal-0.1.0*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert not any(name.endswith("SOURCES.txt") for name in names)
    assert "minimal/include/extras/extras.h" in names
    assert "minimal/lib/libminimal.so" in names and "minimal/lib/libminimal_python.so" in names
    assert any(n.startswith("minimal/_C.") for n in names)
    assert "minimal/share/cmake/Minimal/MinimalConfig.cmake" in names

    setup_py(overlay_python, minimal_project, "bdist_wheel", "--dist-dir", tmp_path / "dist2",
             env=clean_env(BUILD_EXTRAS="OFF"))
    names = zipfile.ZipFile(next((tmp_path / "dist2").glob("*.whl"))).namelist()
    assert "minimal/include/extras/extras.h" not in names


def test_library_only_wheel_has_no_python(test_package, overlay_python, tmp_path):
    minimal_project = test_package("minimal")
    setup_py(overlay_python, minimal_project, "bdist_wheel", "--dist-dir", tmp_path,
             env=clean_env(BUILD_LIBTORCH_WHL="1"))
    wheel = next(tmp_path.glob("*.whl"))
    assert wheel.name.startswith("libminimal-0.1.0-py3-none-linux_")
    names = zipfile.ZipFile(wheel).namelist()
    assert not any(n.endswith(".py") and n.startswith("minimal/") for n in names)
    assert not any("/_C." in n for n in names)


def test_python_only_requirements_pin_the_library(test_package):
    minimal_project = test_package("minimal")
    project = Project.load(minimal_project, environ={"BUILD_PYTHON_ONLY": "1", "MINIMAL_BUILD_VERSION": "1.2.3"})
    assert "libminimal==1.2.3" in project.requirements()
    extra = Project.load(minimal_project, environ={"MINIMAL_EXTRA_INSTALL_REQUIREMENTS": "numpy>=1.24|pyyaml"})
    assert extra.requirements() == ["numpy>=1.24", "pyyaml"]


def test_new_header_in_an_installed_folder_is_installed_on_the_next_build(test_package):
    minimal_project = test_package("minimal")
    cli = [sys.executable, "-m", "buildkit", "build", minimal_project]
    run(cli, env=clean_env())
    installed = minimal_project / "minimal" / "include" / "minimal"
    install_log = build_folder(minimal_project) / ".buildkit" / "logs" / "install.log"
    before = install_log.stat().st_mtime_ns
    run(cli, env=clean_env())
    assert install_log.stat().st_mtime_ns == before, "a no-op build must skip the install step"
    # Ninja builds nothing for a new header; cmake_install.cmake says the folder is installed.
    (minimal_project / "include" / "minimal" / "added.h").write_text("#pragma once\n")
    run(cli, env=clean_env())
    assert (installed / "added.h").is_file()


def test_install_folder_added_by_a_cmakelists_edit_is_watched(test_package):
    """Ninja regenerates the build after a CMakeLists.txt edit without buildkit configuring:
    the install sources still follow the install script CMake wrote last."""
    minimal_project = test_package("minimal")
    cli = [sys.executable, "-m", "buildkit", "build", minimal_project]
    run(cli, env=clean_env())
    extra = minimal_project / "assets"
    extra.mkdir()
    (extra / "one.txt").write_text("1\n")
    cmakelists = minimal_project / "CMakeLists.txt"
    cmakelists.write_text(cmakelists.read_text() + "\ninstall(DIRECTORY assets DESTINATION share/assets)\n")
    run(cli, env=clean_env())
    installed = minimal_project / "minimal" / "share" / "assets" / "assets"
    assert (installed / "one.txt").is_file()
    (extra / "two.txt").write_text("2\n")  # no target changes: only the install rule knows
    run(cli, env=clean_env())
    assert (installed / "two.txt").is_file()


def test_bdist_wheel_skip_build_packs_the_earlier_build_or_refuses(test_package, overlay_python, tmp_path):
    """--skip-build packs what `build` left in build/lib, which the wheel build used to
    delete first (a wheel of nothing but its metadata); without build/lib it refuses."""
    minimal_project = test_package("minimal")
    setup_py(overlay_python, minimal_project, "build")
    setup_py(overlay_python, minimal_project, "bdist_wheel", "--skip-build", "--dist-dir", tmp_path / "dist")
    names = zipfile.ZipFile(next((tmp_path / "dist").glob("minimal-0.1.0*.whl"))).namelist()
    assert {"minimal/__init__.py", "minimal/info.py", "minimal/lib/libminimal.so",
            "minimal/include/minimal/minimal.h"} <= set(names)
    assert any(n.startswith("minimal/_C.") for n in names)

    for built in (minimal_project / "build").glob("lib.*"):
        shutil.rmtree(built)
    refused = setup_py(overlay_python, minimal_project, "bdist_wheel", "--skip-build", "--dist-dir",
                       tmp_path / "dist2", check=False)
    message = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "--skip-build found no" in message and "Traceback" not in message
    assert not list((tmp_path / "dist2").glob("*.whl"))
