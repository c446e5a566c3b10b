"""One build per command: a `buildkit develop` that has setuptools work to do (the
editable registration, the `_C` stub) still runs the CMake driver once, prints one
result line, and hands its project to `setup.py` instead of building again."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from buildkit.builder.build_lock import lock_build_folder
from buildkit.errors import BuildkitError
from buildkit.frontends import editable
from buildkit_testing.processes import run

RESULT_LINE = re.compile(r"^buildkit: (up to date|done in) ", re.M)

pytestmark = pytest.mark.slow


BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "CI": "true"}


def develop(python: Path, project: Path) -> str:
    done = run([python, "-m", "buildkit", "develop", project], env=BARE_ENV)
    return done.stdout + done.stderr


def test_develop_builds_once_and_says_so_once(test_package: Callable[..., Path], overlay_python: Path) -> None:
    minimal_project = test_package("minimal")
    cold = develop(overlay_python, minimal_project)
    assert len(RESULT_LINE.findall(cold)) == 1, cold
    assert "registered editable install of minimal" in cold

    # A changed setup.py means setuptools work (the stub, the registration) but no CMake work; the
    # result line says so, with the whole command's time (it once said "up to date" with the build's).
    with (minimal_project / "setup.py").open("a") as handle:
        handle.write("import time; time.sleep(1)  # changed, and slow\n")
    changed = develop(overlay_python, minimal_project)
    assert RESULT_LINE.findall(changed) == ["done in"], changed
    assert "running develop" in changed
    line = re.search(r"done in ([\d.]+) s: build [\d.]+ s \(nothing to rebuild\), setup.py ([\d.]+) s$", changed, re.M)
    assert line and float(line[1]) >= float(line[2]) >= 1.0, changed
    # So does `python setup.py develop`'s, at its end: setuptools' part (the registration) is a
    # phase, and the time counts from the process's start (a second of setup.py before setup()).
    setup_py = minimal_project / "setup.py"
    setup_py.write_text("import time; time.sleep(1)\n" + setup_py.read_text())
    done = run([overlay_python, "setup.py", "develop"], cwd=minimal_project, env=BARE_ENV)
    line = re.search(r"^buildkit: done in ([\d.]+) s: build [\d.]+ s \(nothing to rebuild\), setuptools [\d.]+ s$",
                     done.stderr, re.M)
    assert RESULT_LINE.findall(done.stderr) == ["done in"] and line and float(line[1]) >= 1.0, done.stderr

    noop = develop(overlay_python, minimal_project)
    assert RESULT_LINE.findall(noop) == ["up to date"], noop
    assert "running develop" not in noop

    # The no-op paths never pay for setuptools (~130 ms to import) or rich.
    heavy = "print(sorted(m for m in sys.modules if m.split('.')[0] in ('setuptools', 'distutils', 'rich')))"
    for run_noop in ("from buildkit.frontends.cli.main import main; main(['develop', '.'])",
                     "import runpy; sys.argv = ['setup.py', 'develop']; runpy.run_path('setup.py', run_name='__main__')"):
        done = run([overlay_python, "-c", f"import sys; {run_noop}; {heavy}"], cwd=minimal_project, env=BARE_ENV)
        assert done.stdout.strip().splitlines()[-1] == "[]", run_noop

    # The console script answers a no-op without reading the project at all: ninja and the
    # install summary only (buildkit.frontends.noop_develop), not even the install step.
    loaded = "print(sorted(m for m in sys.modules if m in ('buildkit.project', 'buildkit.config.settings')))"
    # (what the interpreter had loaded before, a venv's .pth files included, is not counted)
    first_stage = ("print(sorted(m for m in set(sys.modules) - at_start if m in ('buildkit.project',"
                   " 'buildkit.builder.install.step', 'typing', 'pathlib', 'json', 'subprocess')))")
    entry = "from buildkit.frontends.cli.entry import main; assert main(['develop', '.']) == 0"
    # `python setup.py develop` (runpy.run_path would load typing for itself, through pkgutil)
    setup_py = ("sys.argv = ['setup.py', 'develop']; "
                "exec(compile(open('setup.py').read(), 'setup.py', 'exec'), {'__name__': '__main__'})")
    for quick in (entry, setup_py):
        done = run([overlay_python, "-c", f"import sys; at_start = set(sys.modules); {quick}; {first_stage}"],
                   cwd=minimal_project, env=BARE_ENV)
        assert done.stdout.strip().splitlines()[-1] == "[]", quick + done.stdout + done.stderr
        assert RESULT_LINE.findall(done.stderr) == ["up to date"], done.stderr
    # An edited source and installed header: ninja and the install, still without the project.
    with (minimal_project / "csrc" / "minimal.cpp").open("a") as handle:
        handle.write("// edited\n")
    header = minimal_project / "include" / "minimal" / "minimal.h"
    header.write_text(header.read_text() + "// edited\n")
    done = run([overlay_python, "-c", f"import sys; {entry}; {loaded}"], cwd=minimal_project, env=BARE_ENV)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
    assert RESULT_LINE.findall(done.stderr) == ["done in"], done.stderr
    installed = [p for p in (minimal_project / "minimal").rglob(header.name)]
    assert installed and all(p.read_text() == header.read_text() for p in installed)
    # A changed input (here the environment) goes through the whole command again.
    done = run([overlay_python, "-c", f"import sys; {entry}; {loaded}"], cwd=minimal_project,
               env={**BARE_ENV, "MAX_JOBS": "1"})
    assert "buildkit.project" in done.stdout, done.stdout + done.stderr


def test_the_build_lock_is_not_reentrant(tmp_path: Path) -> None:
    with lock_build_folder(tmp_path):
        with pytest.raises(RuntimeError, match="already held by this process"):
            with lock_build_folder(tmp_path):
                pass
    with lock_build_folder(tmp_path):  # released: taken again
        pass


def test_a_pip_install_is_replaced_without_pip_through_its_record(tmp_path, monkeypatch):
    """In a pip-less venv the editable registration still replaces pip's install of the project:
    the files its RECORD lists go, as `pip uninstall` would remove them; without a RECORD it stops."""
    site = tmp_path / "site"
    info = site / "demo-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "INSTALLER").write_text("pip\n")
    (site / "__editable__.demo-1.0.pth").write_text("/somewhere\n")
    (info / "RECORD").write_text("__editable__.demo-1.0.pth,,\ndemo-1.0.dist-info/INSTALLER,,\n")
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real_find_spec(name, *a))
    editable._remove_existing(info, "demo", site)
    assert not info.exists() and not (site / "__editable__.demo-1.0.pth").exists()

    info.mkdir()
    (info / "INSTALLER").write_text("conda\n")
    with pytest.raises(BuildkitError, match="this interpreter has no pip, and demo-1.0.dist-info has no RECORD"):
        editable._remove_existing(info, "demo", site)


GENERATOR = """
# A header written into the installed source folder by a build step (as PyTorch's codegen
# writes into its source tree), a while after the build starts.
add_custom_command(OUTPUT "${PROJECT_SOURCE_DIR}/include/minimal/generated.h"
  COMMAND "${CMAKE_COMMAND}" -E sleep 1
  COMMAND "${CMAKE_COMMAND}" -E copy "${PROJECT_SOURCE_DIR}/generated.txt" "${PROJECT_SOURCE_DIR}/include/minimal/generated.h"
  DEPENDS "${PROJECT_SOURCE_DIR}/generated.txt")
add_custom_target(generate_header ALL DEPENDS "${PROJECT_SOURCE_DIR}/include/minimal/generated.h")
"""


def test_a_header_a_build_step_writes_into_an_installed_folder_is_installed_by_that_build(
        test_package: Callable[..., Path], overlay_python: Path) -> None:
    """The no-op path scans the installed trees' sources while ninja runs; a build step that
    then rewrites one of them (not a compile or link) must not leave the old copy installed."""
    project = test_package("minimal")
    (project / "generated.txt").write_text("// generated 1\n")
    with (project / "CMakeLists.txt").open("a") as handle:
        handle.write(GENERATOR)
    develop(overlay_python, project)
    installed = project / "minimal" / "include" / "minimal" / "generated.h"
    assert installed.read_text() == "// generated 1\n"
    assert RESULT_LINE.findall(develop(overlay_python, project)) == ["up to date"]

    (project / "generated.txt").write_text("// generated 2\n")
    entry = "from buildkit.frontends.cli.entry import main; assert main(['develop', '.']) == 0"
    loaded = "print('buildkit.project' in sys.modules)"
    done = run([overlay_python, "-c", f"import sys; {entry}; {loaded}"], cwd=project, env=BARE_ENV)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout + done.stderr  # the no-op path
    assert installed.read_text() == "// generated 2\n"
