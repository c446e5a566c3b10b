"""`[tool.buildkit] cmake = false`: the Python side of a project, with no CMake at all.

tests/packages/pure_python has no CMakeLists.txt: a version module generated from
version.txt, package data (one file excluded), a console script, a setup.py.  It is
built by real pip in fresh venvs, by the setuptools commands and by `buildkit develop`;
none of them may start CMake (no CMakeCache.txt, no configure record) and the wheel is
pure.  Without the setting the same project stops with one error naming it.  The
options of a CMake build are refused, warned about or named, by where they were set.
"""

from __future__ import annotations

import json
import shutil
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from buildkit.builder.build_state import CONFIGURE_RECORD
from buildkit.config.invocation import Invocation
from buildkit.config.python_layout import nested_package
from buildkit.errors import ConfigError, ModeConflictError
from buildkit.frontends.cli.wheels import Run as WheelsRun
from buildkit.frontends.cli.wheels import build_parser as wheels_parser
from buildkit.project import Project
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, setup_py, unboxed
from buildkit_testing.projects import write_file, write_files, write_pyproject
from buildkit_testing.venvs import make_venv, pip_into, venv_env

PACKAGE = "pure_python"
EXPECTED_WHEEL = {"purepy/__init__.py", "purepy/_version.py", "purepy/data/greeting.txt",
                  *(f"purepy-2.1.0.dist-info/{name}" for name in ("METADATA", "WHEEL", "RECORD", "top_level.txt",
                                                                   "entry_points.txt"))}
PROBE = "import json, purepy; print(json.dumps([purepy.__version__, purepy.greeting(), purepy.__file__]))"


def ran_no_cmake(project: Path, python: Path | None = None) -> bool:
    """No configure happened in the project's build folder: no cache, no configure record."""
    folder = build_folder(project, python)
    return not (folder / "CMakeCache.txt").exists() and not (folder / CONFIGURE_RECORD).exists()


def without_the_setting(project: Path) -> Path:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("cmake = false\n", ""))
    return project


# ------------------------------------------------------------------- front ends

@pytest.mark.slow
def test_pip_wheel_install_and_editable(test_package, buildkit_venv, wheelhouse, tmp_path):
    project = test_package(PACKAGE)
    env = venv_env(buildkit_venv, wheelhouse)
    run([buildkit_venv, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist",
         project], env=env)
    wheel = only_wheel(tmp_path / "dist")
    assert wheel.name == "purepy-2.1.0-py3-none-any.whl"
    archive = zipfile.ZipFile(wheel)
    assert set(archive.namelist()) == EXPECTED_WHEEL
    assert "Root-Is-Purelib: true" in archive.read("purepy-2.1.0.dist-info/WHEEL").decode()
    version_module = archive.read("purepy/_version.py").decode()
    assert "__version__: str = '2.1.0'" in version_module and "build_type" not in version_module
    assert not (project / "src" / "purepy" / "_version.py").exists(), "a wheel build wrote into the source tree"
    assert ran_no_cmake(project, buildkit_venv)

    fresh = make_venv(tmp_path / "fresh", with_pip=False)
    pip_into(fresh, wheelhouse, "install", "-q", wheel)
    assert run([fresh.parent / "purepy"], cwd=tmp_path, env=clean_env()).stdout == "purepy 2.1.0: hello from purepy\n"

    run([buildkit_venv, "-m", "pip", "install", "-q", "--no-build-isolation", "-e", project], env=env)
    try:
        version, greeting, location = json.loads(run([buildkit_venv, "-c", PROBE], cwd=tmp_path, env=env).stdout)
        assert (version, greeting) == ("2.1.0", "hello from purepy")
        assert Path(location) == project / "src" / "purepy" / "__init__.py"
    finally:
        run([buildkit_venv, "-m", "pip", "uninstall", "-y", "-q", "purepy"], env=env)
    assert ran_no_cmake(project, buildkit_venv)


@pytest.mark.slow
def test_setup_py_sdist_and_bdist_wheel(test_package, overlay_python, tmp_path):
    project = test_package(PACKAGE)
    setup_py(overlay_python, project, "sdist")
    with tarfile.open(only_wheel_or_sdist(project / "dist", ".tar.gz")) as sdist:
        names = {name.partition("/")[2] for name in sdist.getnames()}
    assert {"pyproject.toml", "setup.py", "version.txt", "PKG-INFO", "src/purepy/__init__.py",
            "src/purepy/data/greeting.txt", "src/purepy/data/draft.txt"} <= names
    assert "src/purepy/_version.py" not in names  # generated: the wheel built from the sdist writes it

    setup_py(overlay_python, project, "bdist_wheel")
    wheel = only_wheel_or_sdist(project / "dist", ".whl")
    assert wheel.name == "purepy-2.1.0-py3-none-any.whl"
    assert set(zipfile.ZipFile(wheel).namelist()) == EXPECTED_WHEEL
    assert ran_no_cmake(project)

    # A prebuilt library shipped as package data is native code: a platform wheel, for any Python 3.
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to make a prebuilt library with")
    source = write_files(tmp_path, {"prebuilt.c": "int answer(void) { return 42; }\n"}) / "prebuilt.c"
    run(["cc", "-shared", "-fPIC", "-o", project / "src" / "purepy" / "libprebuilt.so", source])
    wheel.unlink()
    built = setup_py(overlay_python, project, "bdist_wheel")
    wheel = only_wheel_or_sdist(project / "dist", ".whl")
    assert wheel.name == f"purepy-2.1.0-py3-none-{sysconfig.get_platform().replace('-', '_')}.whl", built.stderr
    assert "purepy/libprebuilt.so" in zipfile.ZipFile(wheel).namelist()
    assert "a platform wheel: purepy/libprebuilt.so is a native binary" in built.stderr
    # ... and a source of the sdist: nothing was compiled, so no library is an output to leave out.
    setup_py(overlay_python, project, "sdist")
    with tarfile.open(only_wheel_or_sdist(project / "dist", ".tar.gz")) as sdist:
        assert "purepy-2.1.0/src/purepy/libprebuilt.so" in sdist.getnames()
    assert ran_no_cmake(project)


@pytest.mark.slow
def test_python_m_build_makes_the_wheel_from_the_sdist(test_package, overlay_python, tmp_path):
    """`python -m build`: the sdist, then the wheel built from the unpacked sdist (no version.txt
    there is read: PKG-INFO carries the version)."""
    project = test_package(PACKAGE)
    run([overlay_python, "-m", "build", "--no-isolation", "-o", tmp_path / "dist", project], env=clean_env())
    assert sorted(path.name for path in (tmp_path / "dist").iterdir()) == ["purepy-2.1.0-py3-none-any.whl",
                                                                          "purepy-2.1.0.tar.gz"]
    wheel = zipfile.ZipFile(tmp_path / "dist" / "purepy-2.1.0-py3-none-any.whl")
    assert set(wheel.namelist()) == EXPECTED_WHEEL
    assert "__version__: str = '2.1.0'" in wheel.read("purepy/_version.py").decode()


def only_wheel_or_sdist(folder: Path, suffix: str) -> Path:
    found = [path for path in folder.iterdir() if path.name.endswith(suffix)]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow
def test_develop_then_no_op_then_clean(test_package, overlay_python, tmp_path):
    project = test_package(PACKAGE)
    develop = [overlay_python, "-m", "buildkit", "develop", project]
    first = run(develop, env=clean_env())
    assert "no CMake build ([tool.buildkit] cmake = false)" in first.stderr
    version, greeting, location = json.loads(run([overlay_python, "-c", PROBE], cwd=tmp_path).stdout)
    assert (version, greeting, Path(location)) == ("2.1.0", "hello from purepy",
                                                   project / "src" / "purepy" / "__init__.py")
    assert run([overlay_python.parent / "purepy"], cwd=tmp_path).stdout == "purepy 2.1.0: hello from purepy\n"

    # The second run is the no-op's first stage alone: no project loaded, no setuptools, no ninja.
    probe = ("import sys; from buildkit.frontends.cli.entry import main; rc = main(['develop', %r]); "
             "print('setuptools' in sys.modules, 'buildkit.project' in sys.modules, rc)") % str(project)
    no_op = run([overlay_python, "-c", probe], env=clean_env())
    assert no_op.stdout.split() == ["False", "False", "0"] and "up to date" in no_op.stderr
    assert "up to date" in setup_py(overlay_python, project, "develop").stderr

    (project / "version.txt").write_text("2.2.0\n")  # an input of the no-op changed: the full command runs
    again = run(develop, env=clean_env())
    assert "no CMake build" in again.stderr
    assert "__version__: str = '2.2.0'" in (project / "src" / "purepy" / "_version.py").read_text()
    assert ran_no_cmake(project)

    # clean: the build folder and the generated module go; without CMake a library in the package is the
    # project's own (shipped as package data), and so is a compile_commands.json.
    prebuilt = write_files(project, {"src/purepy/prebuilt.so": "x", "compile_commands.json": "[]"})
    run([overlay_python, "-m", "buildkit", "clean", project])
    assert not build_folder(project).exists() and not (project / "src" / "purepy" / "_version.py").exists()
    assert (prebuilt / "src" / "purepy" / "prebuilt.so").exists() and (project / "compile_commands.json").exists()
    # No build folder, no record: the no-op hands over to the full command, which builds again.
    assert "no CMake build" in run(develop, env=clean_env()).stderr
    assert (project / "src" / "purepy" / "_version.py").is_file()


@pytest.mark.slow
def test_without_the_setting_one_error_names_it(test_package, overlay_python, buildkit_venv, wheelhouse, tmp_path):
    project = without_the_setting(test_package(PACKAGE))
    for command, env in (([overlay_python, "-m", "buildkit", "develop", project], clean_env()),
                         ([buildkit_venv, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                           tmp_path / "dist", project], venv_env(buildkit_venv, wheelhouse))):
        result = run(command, env=env, check=False)
        said = unboxed(result.stdout + result.stderr)
        assert result.returncode != 0
        assert "There is no CMakeLists.txt in" in said and "add `cmake = false` to [tool.buildkit]" in said, said
        assert "does not appear to contain CMakeLists.txt" not in said and "Traceback" not in said
    assert ran_no_cmake(project) and ran_no_cmake(project, buildkit_venv)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="auditwheel repairs Linux wheels only")
def test_buildkit_wheels_publishes_a_pure_wheel_unrepaired(test_package, tmp_path, capsys):
    """auditwheel refuses a wheel without native code ("This does not look like a platform
    wheel"): `buildkit wheels` says there is nothing to repair and publishes it as built."""
    project = Project.load(test_package(PACKAGE))
    out = tmp_path / "out"
    out.mkdir()
    args = wheels_parser().parse_args([str(project.root), "--out", str(out)])
    built = write_files(tmp_path / "raw", {"purepy-2.1.0-py3-none-any.whl": "a wheel"})
    published = WheelsRun(project, tmp_path / "work", out, None, args).repair(
        built / "purepy-2.1.0-py3-none-any.whl", exclude=())
    assert published == out / "purepy-2.1.0-py3-none-any.whl" and published.read_text() == "a wheel"
    assert "not repaired: purepy-2.1.0-py3-none-any.whl is pure" in capsys.readouterr().err


def test_doctor_needs_no_cmake_tools(test_package):
    project = test_package(PACKAGE)
    result = run([sys.executable, "-m", "buildkit", "doctor", project], env=clean_env())
    table = unboxed(result.stderr)
    assert "CMake build" in table and "cmake = false" in table and "C++ compiler" not in table
    failing = run([sys.executable, "-m", "buildkit", "doctor", without_the_setting(project)], env=clean_env(),
                  check=False)
    assert failing.returncode == 1 and "add `cmake = false` to [tool.buildkit]" in unboxed(failing.stderr)


# ------------------------------------------------------------------- settings and options

def project_with(tmp_path: Path, table: str) -> Path:
    write_file(tmp_path / "demo" / "__init__.py", "")
    return write_pyproject(tmp_path, f"cmake = false\n{table}")


def test_keys_of_a_cmake_build_are_refused_together(tmp_path):
    root = project_with(tmp_path, 'build-type = "Debug"\ncmake-defines = { X = "1" }\n'
                                  'scripts = [{ name = "d", target = "demo:main", when = "USE_X" }]\n')
    with pytest.raises(ConfigError) as refused:
        Project.load(root, environ={})
    assert refused.value.message == (
        "[tool.buildkit] cmake = false builds no CMake project, but [tool.buildkit] cmake-defines, "
        "[tool.buildkit] scripts[0].when, [tool.buildkit] build-type are read by the CMake build only.")


@pytest.mark.parametrize(("environ", "variable"), [({"BUILD_LIBTORCH_WHL": "1"}, "BUILD_LIBTORCH_WHL=1"),
                                                   ({"BUILD_PYTHON_ONLY": "on"}, "BUILD_PYTHON_ONLY=1")])
def test_a_split_wheel_is_refused(tmp_path, environ, variable):
    with pytest.raises(ModeConflictError) as refused:
        Project.load(project_with(tmp_path, ""), environ=environ)
    assert refused.value.message.startswith(f"{variable} (the environment) asks for a ")


def test_options_from_the_command_and_the_environment_are_named(tmp_path, capsys):
    project = Project.load(project_with(tmp_path, ""), environ={"DEBUG": "1", "USE_CUDA": "1", "DESTDIR": "/x",
                                                                 "CMAKE_ARGS": "-DCMAKE_INSTALL_PREFIX=/x"},
                           invocation=Invocation(config_settings={"build-type": "Debug", "USE_X": "1"}))
    err = capsys.readouterr().err
    assert "ignored config settings CMAKE_BUILD_TYPE, -DUSE_X: [tool.buildkit] cmake = false" in err
    assert "not used without CMake (cmake = false): DEBUG, CMAKE_ARGS from the environment" in err
    assert not project.plan.wheel_root_install  # and DESTDIR, CMAKE_INSTALL_PREFIX: no CMake install to guard


def test_a_dotted_name_finds_its_namespace_package(tmp_path):
    write_files(tmp_path, {"src/myns/mypkg/__init__.py": "", "python/other/x.py": ""})
    assert nested_package(tmp_path, "myns.mypkg") == "myns.mypkg"
    assert nested_package(tmp_path, "myns-mypkg") is None  # no dot: the flat name only
    # scikit-build-core's order: src/ before the root, and in each the flat name first.
    write_files(tmp_path, {"myns_mypkg/__init__.py": ""})
    assert nested_package(tmp_path, "myns.mypkg") == "myns.mypkg"
    write_files(tmp_path, {"src/myns_mypkg/__init__.py": ""})
    assert nested_package(tmp_path, "myns.mypkg") is None
