"""The public entry points survive any reshuffle of buildkit's internal modules:
``from buildkit import setup``, ``buildkit.build_meta``, the ``buildkit`` console
script, ``python -m buildkit``, and ``include(Buildkit)`` with its CMake helpers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import buildkit
import buildkit.build_meta
from buildkit._util.resources import cmake_dir
from buildkit.builder.toolchain import tools as toolchain
from buildkit_testing.projects import add_settings

PYPROJECT = textwrap.dedent("""
    [project]
    name = "apidemo"
    dynamic = ["version"]
    [tool.buildkit]
    package = "apidemo"
""")


@pytest.fixture
def tiny_project(tmp_path: Path) -> Path:
    root = tmp_path / "apidemo"
    (root / "apidemo").mkdir(parents=True)
    (root / "apidemo" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "version.txt").write_text("1.2.3\n")
    (root / "setup.py").write_text("from buildkit import setup\nsetup()\n")
    return root


def test_setup_from_the_package_root(tiny_project: Path) -> None:
    assert callable(buildkit.setup)
    done = subprocess.run([sys.executable, "setup.py", "--name", "--version"], cwd=tiny_project,
                          capture_output=True, text=True, env={**os.environ, "APIDEMO_BUILD_VERSION": "1.2.3"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["apidemo", "1.2.3"]


def test_build_meta_hooks(tiny_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(buildkit.build_meta.__all__) == {
        "build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable",
        "get_requires_for_build_sdist", "get_requires_for_build_wheel"}
    monkeypatch.chdir(tiny_project)
    assert isinstance(buildkit.build_meta.get_requires_for_build_sdist({"BUILD_TYPE": "x"}), list)


def test_wheel_hooks_ask_for_cmake_only_where_the_machine_lacks_it(tiny_project: Path, session_probe_cache: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The build environment gets cmake and ninja from the index only when no new-enough
    one is here (the cmake wheel cost 2-3 s of every isolated cold build)."""
    monkeypatch.chdir(tiny_project)
    monkeypatch.setenv("APIDEMO_BUILD_VERSION", "1.2.3")
    for hook in (buildkit.build_meta.get_requires_for_build_wheel, buildkit.build_meta.get_requires_for_build_editable):
        assert not [r for r in hook(None) if r.startswith(("cmake", "ninja"))]
    add_settings(tiny_project, 'cmake-minimum-version = "99.0"')
    assert "cmake>=99.0" in buildkit.build_meta.get_requires_for_build_wheel(None)
    assert "cmake>=99.0" in buildkit.build_meta.get_requires_for_build_editable({"USE_NINJA": "0"})
    # A machine without cmake or ninja: a project that runs no CMake still asks for neither.
    monkeypatch.setattr(toolchain, "_locate", lambda program: None)
    monkeypatch.setattr(toolchain, "pypi_binary", lambda name: None)
    pyproject = tiny_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('cmake-minimum-version = "99.0"', "cmake = false"))
    assert not [r for r in buildkit.build_meta.get_requires_for_build_wheel(None) if r.startswith(("cmake", "ninja"))]


def test_lazy_names_of_the_package() -> None:
    assert buildkit.WheelMode("library-only") is buildkit.WheelMode.LIBRARY_ONLY
    assert buildkit.parse_bool("ON", "X") is True
    assert issubclass(buildkit.BuildkitError, Exception)
    with pytest.raises(AttributeError):
        buildkit.no_such_name  # noqa: B018


def test_console_script_and_dash_m() -> None:
    script = Path(sys.executable).with_name("buildkit")
    if not script.exists():
        pytest.skip("the buildkit console script is not installed beside this interpreter")
    for command in ([str(script), "--help"], [sys.executable, "-m", "buildkit", "--help"]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "develop" in done.stdout and "wheels" in done.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_include_buildkit_and_its_helpers(tmp_path: Path) -> None:
    (tmp_path / "lib.c").write_text("int answer(void) { return 42; }\n")
    (tmp_path / "bind.c").write_text("int bound(void) { return 1; }\n")
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent("""
        cmake_minimum_required(VERSION 3.24)
        project(api LANGUAGES C)
        include(Buildkit)
        add_library(answer SHARED lib.c)
        buildkit_relative_rpath(answer lib)
        get_target_property(rpath answer INSTALL_RPATH)
        message(STATUS "RPATH=${rpath}")
        buildkit_python_binding_library(api_python SOURCES bind.c LINK answer)
    """))
    done = subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"),
                           f"-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES={cmake_dir() / 'BuildkitTopLevel.cmake'}",
                           f"-DPython_EXECUTABLE={sys.executable}"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "RPATH=$ORIGIN;$ORIGIN/lib" in done.stdout
