"""`install-dir` (scikit-build-core's `wheel.install-dir`): CMake's install prefix in a folder
of the wheel's root, for develop in place and for a wheel alike, while `SKBUILD_PLATLIB_DIR`
stays the root; and `SKBUILD_STATE`, which CMake reads as `editable` in a develop and `wheel`
in a wheel build.

One project, built once for the module: `buildkit develop`, a second develop (a no-op),
`pip wheel`, then `pip install -e` into a venv of its own.  The last test moves install-dir
and develops twice more.  The refusals of bad
values are rows of tests/test_settings_errors.py; the destination check's rows are in
tests/test_install_destinations.py.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from buildkit.config.modes import InstallPrefix
from buildkit.config.settings import load_settings
from buildkit.project import Project, cmake_inputs
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.processes import clean_env, run
from buildkit_testing.projects import write_file, write_files, write_pyproject
from buildkit_testing.venvs import overlay_venv

RESULT_LINE = re.compile(r"^buildkit: (up to date|done in) ", re.M)
PROJECT = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools-buildkit"]\nbuild-backend = "buildkit.build_meta"\n\n'
                      '[project]\nname = "dirdemo"\nversion = "1.0"\n\n'
                      '[tool.buildkit]\ninstall-dir = "cmake_dirs"\n',
    "csrc/fast.c": '#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n'
                   'static PyObject* d(PyObject* s, PyObject* a) { return PyNumber_Add(a, a); }\n'
                   'static PyMethodDef m[] = {{"double", d, METH_O, 0}, {0}};\n'
                   'static struct PyModuleDef md = {PyModuleDef_HEAD_INIT, "_fast", 0, -1, m};\n'
                   'PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&md); }\n',
    "csrc/main.py": "ANSWER = 42\n",
    # `DESTINATION .` is the install prefix (install-dir); SKBUILD_PLATLIB_DIR the wheel's root,
    # where a module CMake writes says which state CMake was configured for.
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.24)\nproject(${SKBUILD_PROJECT_NAME} LANGUAGES C)\n"
                      "find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)\n"
                      "Python_add_library(_fast MODULE csrc/fast.c WITH_SOABI)\n"
                      "install(TARGETS _fast DESTINATION .)\n"
                      "install(FILES csrc/main.py DESTINATION .)\n"
                      'file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/rootmod.py "STATE = \'${SKBUILD_STATE}\'\\n")\n'
                      "install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rootmod.py DESTINATION ${SKBUILD_PLATLIB_DIR})\n",
}
PROBE = ("import cmake_dirs.main as m, cmake_dirs._fast as f, rootmod\n"
         "print(m.ANSWER, f.double(21), rootmod.STATE, m.__file__)\n")


@dataclass
class Built:
    project: Path
    python: Path
    developed: list[str]  # the project's files after the first develop (the build folder left out)
    probe: list[str]  # what PROBE printed after it, from an unrelated folder
    second_develop: str
    wheel_names: set[str]
    wheel_state: str
    editable_probe: list[str]  # PROBE after `pip install -e` in another venv


def develop(python: Path, project: Path) -> str:
    done = run([python, "-m", "buildkit", "develop", project], cwd=project, env=clean_env())
    return done.stdout + done.stderr


def tree(project: Path) -> list[str]:
    return sorted(path.relative_to(project).as_posix() for path in project.rglob("*")
                  if path.is_file() and "build" not in path.relative_to(project).parts[:1]
                  and "egg-info" not in str(path))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = tmp_path_factory.mktemp("install-dir")
    project = write_files(base / "dirdemo", PROJECT)
    python = overlay_venv(base / "venv")
    develop(python, project)
    developed = tree(project)
    probe = run([python, "-c", PROBE], cwd=base, env=clean_env()).stdout.split()
    second = develop(python, project)
    run([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", base / "dist", project],
        cwd=base, env=clean_env())
    with zipfile.ZipFile(only_wheel(base / "dist")) as wheel:
        names, state = set(wheel.namelist()), wheel.read("rootmod.py").decode()
    editable = overlay_venv(base / "editable-venv")
    run([editable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", project], cwd=base,
        env=clean_env())
    editable_probe = run([editable, "-c", PROBE], cwd=base, env=clean_env()).stdout.split()
    return Built(project, python, developed, probe, second, names, state, editable_probe)


@pytest.mark.slow
def test_develop_installs_into_the_install_dir_and_the_root_stays_the_platlib_dir(built: Built) -> None:
    assert "cmake_dirs/main.py" in built.developed and "rootmod.py" in built.developed
    assert any(re.fullmatch(r"cmake_dirs/_fast\..*\.so", name) for name in built.developed), built.developed
    assert "main.py" not in built.developed and not any(n.startswith("_fast") for n in built.developed)
    answer, double, state, origin = built.probe
    assert (answer, double, state) == ("42", "42", "editable")
    assert origin == str(built.project / "cmake_dirs" / "main.py")  # the in-place tree, not a copy
    assert RESULT_LINE.findall(built.second_develop) == ["up to date"], built.second_develop


@pytest.mark.slow
def test_the_wheel_holds_the_install_dir_folder_and_cmake_saw_the_wheel_state(built: Built) -> None:
    assert {"cmake_dirs/main.py", "rootmod.py"} <= built.wheel_names, sorted(built.wheel_names)
    assert any(re.fullmatch(r"cmake_dirs/_fast\..*\.so", name) for name in built.wheel_names)
    assert not any(name.startswith(("main.py", "_fast", "csrc/")) for name in built.wheel_names)
    assert built.wheel_state == "STATE = 'wheel'\n"


@pytest.mark.slow
def test_an_editable_install_builds_into_the_install_dir_in_place(built: Built) -> None:
    assert built.editable_probe == ["42", "42", "editable", str(built.project / "cmake_dirs" / "main.py")]


@pytest.mark.slow
def test_a_moved_install_dir_installs_again_and_removes_the_old_folder(built: Built) -> None:
    """Changing install-dir is no stale no-op: the develop reconfigures (the install prefix
    changed), installs into the new folder and removes what the last install put into the old
    one, as for any output an install no longer writes; the develop after it is a no-op."""
    pyproject = built.project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"cmake_dirs"', '"cmake_dirs/inner"'))
    moved = develop(built.python, built.project)
    assert RESULT_LINE.findall(moved) == ["done in"], moved
    assert "install prefix changed" in moved
    files = tree(built.project)
    assert "cmake_dirs/inner/main.py" in files and "rootmod.py" in files
    assert not any(re.fullmatch(r"cmake_dirs/[^/]+", name) for name in files), files
    probe = "import cmake_dirs.inner.main as m, cmake_dirs.inner._fast as f; print(m.ANSWER, f.double(2))"
    assert run([built.python, "-c", probe], cwd=built.project.parent, env=clean_env()).stdout.split() == ["42", "4"]
    again = develop(built.python, built.project)
    assert RESULT_LINE.findall(again) == ["up to date"], again


def test_install_dir_makes_wheel_root_the_default_and_moves_only_the_prefix(tmp_path: Path) -> None:
    """A package folder without SKBUILD in the CMakeLists would pick the package layout; with
    install-dir set it is the wheel root's.  The install prefix (and the configure's) is the
    folder; the install root, which SKBUILD_PLATLIB_DIR names, is the package root."""
    write_pyproject(tmp_path, 'install-dir = "a/b"', name="pkg")
    write_file(tmp_path / "src" / "pkg" / "__init__.py", "")
    write_file(tmp_path / "CMakeLists.txt", "project(pkg LANGUAGES C)\n")
    assert load_settings(tmp_path).install_prefix is InstallPrefix.WHEEL_ROOT
    project = Project.load(tmp_path, environ={})
    target = project.target
    assert (target.install_root, target.install_prefix) == (tmp_path / "src", tmp_path / "src" / "a" / "b")
    assert (target.configured_root, target.configured_prefix) == (target.install_root, target.install_prefix)
    defines = cmake_inputs.wheel_root_defines(project)
    assert (defines["SKBUILD_PLATLIB_DIR"], defines["SKBUILD_STATE"]) == ((tmp_path / "src").as_posix(), "editable")


def test_a_library_only_wheel_ignores_install_dir_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_pyproject(tmp_path, 'install-dir = "cmake_dirs"', name="pkg")
    write_file(tmp_path / "pkg" / "__init__.py", "")
    project = Project.load(tmp_path, environ={"BUILD_LIBTORCH_WHL": "1"})
    assert project.target.install_prefix == project.target.install_root == tmp_path / "pkg"
    assert "install-dir = 'cmake_dirs' does not apply to a library-only wheel" in capsys.readouterr().err
