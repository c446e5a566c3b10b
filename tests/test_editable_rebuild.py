"""Rebuild on import (``editable-rebuild``), with real pip, real builds and real imports.

tests/packages/rebuild_on_import is installed with ``pip install --no-build-isolation -e .``
into a fresh venv once for the module; each test sets the value its C++ file returns
(``answer()``) and imports the package from an unrelated folder, as a user's program would.
What is checked: an edit is built before the import, an unchanged import builds and prints
nothing, a compile error stops the import with the compiler's first error, two importing
processes build once and both get the new module, a removed build folder is built again,
and neither a plain wheel nor an install without the setting carries the hook.
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from buildkit.frontends import editable
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import run
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, pip_into, site_packages, venv_env

pytestmark = pytest.mark.slow

NAME = "rebuildme"
HOOK = editable.REBUILD_HOOK.format(normalized=NAME)
PROBE = "import json, rebuildme; print(json.dumps([rebuildme.answer(), rebuildme._native.__file__]))"
ANSWER = "// The value the tests change: rebuildme.answer() returns it.\n#include \"answer.h\"\n\n" \
         "int rebuildme_answer() {{ return {value}; }}\n"


class Installed:
    """The project, installed editable in its own venv; imports run from an unrelated folder."""

    def __init__(self, project: Path, python: Path, wheelhouse: Path, elsewhere: Path):
        self.project, self.python, self.wheelhouse, self.elsewhere = project, python, wheelhouse, elsewhere

    @property
    def ninja_log(self) -> str:
        return (build_folder(self.project) / ".ninja_log").read_text()

    def edit(self, body: str) -> None:
        (self.project / "csrc" / "answer.cpp").write_text(ANSWER.format(value=body))

    def start(self, code: str = PROBE, **env: str) -> subprocess.Popen[str]:
        return subprocess.Popen([str(self.python), "-c", code], cwd=self.elsewhere, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=venv_env(self.python, self.wheelhouse, **env))

    def imported(self, **env: str) -> tuple[int, str]:
        """Import the package: (its answer, what the import printed to stderr)."""
        done = run([self.python, "-c", PROBE], cwd=self.elsewhere, env=venv_env(self.python, self.wheelhouse, **env))
        answer, module = json.loads(done.stdout)
        assert Path(module).parent == self.project / NAME, "the module is not the in-place build's"
        return answer, done.stderr

    def buildkit(self, command: str) -> subprocess.CompletedProcess[str]:
        """The venv's buildkit (not this checkout's, which is in the working folder of the tests)."""
        return run([self.python, "-m", "buildkit", command, self.project], cwd=self.elsewhere,
                   env=venv_env(self.python, self.wheelhouse))

    def failed_import(self, **env: str) -> str:
        done = run([self.python, "-c", PROBE], cwd=self.elsewhere, env=venv_env(self.python, self.wheelhouse, **env),
                   check=False)
        assert done.returncode != 0 and done.stdout == "", done
        return done.stderr


@pytest.fixture(scope="module")
def installed(test_package: Callable[..., Path], wheelhouse: Path, tmp_path_factory) -> Installed:
    project = test_package("rebuild_on_import")
    python = make_venv(tmp_path_factory.mktemp("rebuild-venv") / "venv", with_pip=False)
    pip_into(python, wheelhouse, "install", "-q", *BUILDKIT_WITH_TOOLS, "setuptools", "wheel")
    pip_into(python, wheelhouse, "install", "-q", "--no-build-isolation", "--no-deps", "-e", project)
    assert (site_packages(python) / f"{HOOK}.pth").is_file()
    return Installed(project, python, wheelhouse, tmp_path_factory.mktemp("elsewhere"))


def settled(installed: Installed, value: int) -> None:
    """The project built with ``answer() == value``, by an import."""
    installed.edit(str(value))
    assert installed.imported()[0] == value


def test_an_edit_is_built_before_the_import_and_an_unchanged_import_builds_nothing(installed: Installed) -> None:
    settled(installed, 10)
    before = installed.ninja_log
    answer, printed = installed.imported()
    assert (answer, printed) == (10, ""), "an import with nothing changed printed something"
    assert installed.ninja_log == before

    installed.edit("11")
    answer, printed = installed.imported()
    assert answer == 11
    assert "buildkit: compiling" in printed and "buildkit: done in" in printed, printed
    rebuilt = installed.ninja_log[len(before):]
    assert "answer.cpp.o" in rebuilt and "module.cpp.o" not in rebuilt, rebuilt

    assert installed.imported() == (11, "")  # and quiet again
    quiet = installed.imported(BUILDKIT_EDITABLE_VERBOSE="0")
    installed.edit("12")
    assert installed.imported(BUILDKIT_EDITABLE_VERBOSE="0") == (12, "") and quiet == (11, "")


def test_a_compile_error_stops_the_import_with_the_first_error(installed: Installed) -> None:
    settled(installed, 20)
    installed.edit("21 +")
    printed = installed.failed_import()
    error = printed[printed.index("RebuildOnImportError: "):]
    assert error.startswith(f"RebuildOnImportError: {NAME} could not be rebuilt before its import "
                            "(editable-rebuild): Compiling failed at "), printed
    assert f"{installed.project / 'csrc' / 'answer.cpp'}:4:" in error and "error:" in error
    assert "Failing command" not in error and "-o CMakeFiles" not in error, "the message is not the first error alone"
    assert "Full log: " in error and "BUILDKIT_EDITABLE_REBUILD=0 imports the last build" in error

    # An ImportError like any other; a later import in the same process fails the same way, unbuilt.
    twice = ("for attempt in range(2):\n"
             "    try:\n        import rebuildme\n"
             "    except ImportError as error:\n        print(type(error).__name__)")
    done = run([installed.python, "-c", twice], cwd=installed.elsewhere,
               env=venv_env(installed.python, installed.wheelhouse))
    assert done.stdout.split() == ["RebuildOnImportError"] * 2, done
    assert done.stderr.count("buildkit: compiling") == 1, "the failed build ran again in the same process"

    assert installed.imported(BUILDKIT_EDITABLE_REBUILD="0") == (20, "")  # the last build, as it is
    installed.edit("22")
    assert installed.imported()[0] == 22


def test_two_processes_importing_after_an_edit_build_once_and_both_get_it(installed: Installed) -> None:
    settled(installed, 30)
    before = installed.ninja_log
    installed.edit("31")
    first, second = installed.start(), installed.start()
    outputs = [process.communicate(timeout=600) for process in (first, second)]
    assert [process.returncode for process in (first, second)] == [0, 0], outputs
    assert [json.loads(out)[0] for out, _ in outputs] == [31, 31]
    compiled = [line for line in installed.ninja_log[len(before):].splitlines() if "answer.cpp.o" in line]
    assert len(compiled) == 1, f"answer.cpp was compiled {len(compiled)} times"
    # The tree is the one build's: a build after them has nothing to do, and imports say nothing.
    done = installed.buildkit("build")
    assert "buildkit: up to date" in done.stderr and "compiling" not in done.stderr, done.stderr
    assert installed.imported() == (31, "")


def test_a_removed_build_folder_is_built_again_at_the_import(installed: Installed) -> None:
    settled(installed, 40)
    installed.buildkit("clean")
    assert not build_folder(installed.project).exists()
    answer, printed = installed.imported()
    assert answer == 40
    assert f"the build folder {build_folder(installed.project)} is gone: building {NAME} again" in printed
    assert "configuring" in printed
    assert installed.imported() == (40, "")


def test_a_refused_word_stops_the_import_with_the_parsers_message(installed: Installed) -> None:
    printed = installed.failed_import(BUILDKIT_EDITABLE_REBUILD="sometimes")
    assert "BUILDKIT_EDITABLE_REBUILD='sometimes' is not a boolean." in printed


def test_only_an_editable_wheel_with_the_setting_carries_the_hook(test_package: Callable[..., Path],
                                                                   buildkit_venv: Path, wheelhouse: Path,
                                                                   tmp_path: Path) -> None:
    """The backend's own hooks, run in the project: the editable wheel with the setting has the
    hook's module and .pth file (and says which config settings of the install the rebuild will
    not use); a plain wheel, and an editable one with the setting turned off (a config setting,
    as `pip install -e . -C editable-rebuild=false` passes it), have neither."""
    project = test_package("rebuild_on_import")
    env = venv_env(buildkit_venv, wheelhouse)

    def built(hook: str, folder: str, settings: dict[str, str]) -> tuple[set[str], str]:
        code = f"import buildkit.build_meta as backend; backend.{hook}({str(tmp_path / folder)!r}, {settings!r})"
        done = run([buildkit_venv, "-c", code], cwd=project, env=env)
        return set(zipfile.ZipFile(only_wheel(tmp_path / folder)).namelist()), done.stdout + done.stderr

    hook_files = {f"{HOOK}.py", f"{HOOK}.pth"}
    members, printed = built("build_editable", "editable", {"MAX_JOBS": "1", "editable-verbose": "false"})
    assert hook_files <= members
    assert "the config settings MAX_JOBS of this install are not used then" in " ".join(printed.split()), printed
    assert not hook_files & built("build_editable", "switched-off", {"editable-rebuild": "false"})[0]
    wheel = built("build_wheel", "wheel", {})[0]
    assert f"{NAME}/__init__.py" in wheel and not any(member.startswith("_buildkit") for member in wheel)


def test_buildkit_develop_registers_the_hook_and_the_setting_removes_it(test_package: Callable[..., Path],
                                                                        overlay_python: Path, tmp_path: Path) -> None:
    """`buildkit develop`'s own registration carries the hook too, and drops it when the
    setting is turned off (here for one develop, by the variable)."""
    project = test_package("rebuild_on_import")
    developed = Installed(project, overlay_python, tmp_path, tmp_path)
    env = venv_env(overlay_python, tmp_path)
    done = run([overlay_python, "-m", "buildkit", "develop", project], cwd=tmp_path, env=env)
    assert "(it rebuilds what changed when imported: editable-rebuild)" in done.stderr, done.stderr
    site = site_packages(overlay_python)
    assert (site / f"{HOOK}.pth").is_file()
    assert developed.imported() == (1, "")  # the develop's record serves the import's build
    developed.edit("2")
    assert developed.imported()[0] == 2

    off = run([overlay_python, "-m", "buildkit", "develop", project], cwd=tmp_path,
              env={**env, "BUILDKIT_EDITABLE_REBUILD": "0"})
    assert f"registered editable install of {NAME}" in off.stderr and "editable-rebuild" not in off.stderr
    assert not (site / f"{HOOK}.pth").exists() and not (site / f"{HOOK}.py").exists()
    developed.edit("3")
    assert developed.imported()[0] == 2  # no hook: the last build, as it is


def test_an_unchanged_import_is_answered_in_the_importing_process(test_package: Callable[..., Path],
                                                                   overlay_python: Path, tmp_path: Path) -> None:
    """With nothing changed, the importing process answers itself with the no-op's first stage
    (Python's own import report, on the import's stderr, names no module of the build process,
    of the whole command or of the second stage), in a `build-dir` of the project's own too.
    The version.py the develop generated beside the installed module, after the install, costs
    one full check of the tree, not one on every import."""
    project = test_package("rebuild_on_import")
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("[tool.buildkit]\n", '[tool.buildkit]\nbuild-dir = "out"\n'))
    developed = Installed(project, overlay_python, tmp_path, tmp_path)
    run([overlay_python, "-m", "buildkit", "develop", project], cwd=tmp_path, env=venv_env(overlay_python, tmp_path))
    assert (project / "out" / ".ninja_log").is_file()
    reported = {"PYTHONPROFILEIMPORTTIME": "1"}
    developed.imported(**reported)  # the environment changed: the whole command, once
    answer, printed = developed.imported(**reported)
    assert answer == 1 and "buildkit.project" not in printed and "compiling" not in printed, printed
    answer, printed = developed.imported(**reported)
    assert answer == 1 and "buildkit.frontends.noop_develop" in printed
    assert not any(f"| {module}" in printed or f"  {module}" in printed for module in (
        "buildkit.frontends.cli", "buildkit.frontends.noop_finish", "buildkit.project")), printed

    developed.edit("5")
    answer, printed = developed.imported(**reported)
    assert answer == 5 and "compiling" in printed
    assert "answer.cpp" in (project / "out" / ".ninja_log").read_text()


def test_an_isolated_install_says_what_it_needs_to_rebuild(test_package: Callable[..., Path], wheelhouse: Path,
                                                          tmp_path: Path) -> None:
    """pip's default, build isolation: buildkit was in the build's own environment, which is
    gone.  The import says so and what to do; switched off, the last build is imported; with
    setuptools-buildkit installed, the import rebuilds."""
    project = test_package("rebuild_on_import")
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, wheelhouse, "install", "-q", "--no-deps", "-e", project)
    isolated = Installed(project, python, wheelhouse, tmp_path)
    printed = " ".join(isolated.failed_import().split())
    assert (f"ImportError: {NAME} is an editable install that rebuilds on import (editable-rebuild), but this "
            f"Python ({python}) cannot import buildkit") in printed, printed
    assert "Install setuptools-buildkit into its environment (`pip install setuptools-buildkit`" in printed
    assert "set BUILDKIT_EDITABLE_REBUILD=0 to import the last build as it is" in printed
    assert isolated.imported(BUILDKIT_EDITABLE_REBUILD=" Off ") == (1, "")

    pip_into(python, wheelhouse, "install", "-q", *BUILDKIT_WITH_TOOLS)
    isolated.edit("7")
    assert isolated.imported()[0] == 7
