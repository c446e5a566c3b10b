"""Damaged build-folder state, end to end: every file buildkit keeps or reads under
``build/`` (its own state, CMake's cache and generated files, Ninja's logs) is cut to
nothing, filled with random bytes, or replaced by a folder, and the next ``buildkit
develop`` of tests/packages/minimal either recovers to the clean build's package tree
(byte for byte, importable) or fails with one message, never exits 0 with another tree
and never shows a traceback.

All builds run in one fixed folder (the clean build's files embed its path): the clean
build is made once, kept, and put back before each case.  A representative row of each
kind runs by default; the whole matrix carries the ``hostile`` marker, deselected by
default (``pytest -m hostile tests/test_state_damage.py``, about 2 minutes).
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from buildkit._util.interpreter import soabi
from buildkit_testing.processes import clean_env, run
from buildkit_testing.venvs import overlay_venv

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX paths")]

# Each file of the build folder a develop reads, relative to the project.
BUILD = f"build/{soabi()}"  # the default build-dir under this Python
STATE_FILES = [
    f"{BUILD}/.buildkit/configure.json", f"{BUILD}/.buildkit/toolchain.json", f"{BUILD}/.buildkit/build-env.json",
    f"{BUILD}/.buildkit/compile_commands.stamp", f"{BUILD}/.buildkit/develop.json", f"{BUILD}/.buildkit/noop-develop.marshal",
    f"{BUILD}/.buildkit/build-folder", f"{BUILD}/CMakeCache.txt", f"{BUILD}/build.ninja", f"{BUILD}/CMakeFiles/rules.ninja",
    f"{BUILD}/cmake_install.cmake", f"{BUILD}/install_manifest.txt", f"{BUILD}/compile_commands.json", f"{BUILD}/.ninja_log",
    f"{BUILD}/.ninja_deps", f"{BUILD}/.cmake/api/v1/query/client-buildkit/query.json",
    # setuptools' build of the _C stub, copied in place by every develop.
    (f"build/lib.{sysconfig.get_platform()}-cpython-{sys.version_info[0]}{sys.version_info[1]}/minimal/"
     f"_C{sysconfig.get_config_var('EXT_SUFFIX')}"),
]
# The install step's own files are named by the install prefix's key: found at run time.
INSTALL_STATE_GLOBS = [f"{BUILD}/.buildkit/install-*.record", f"{BUILD}/.buildkit/install-*.cmake",
                       f"{BUILD}/.buildkit/manifest-*.txt"]  # (a summary is written only when its times are safe)
DAMAGES = ["truncate", "garbage", "folder"]
REPRESENTATIVE = {
    (f"{BUILD}/.buildkit/configure.json", "garbage"), (f"{BUILD}/.buildkit/toolchain.json", "folder"),
    (f"{BUILD}/.buildkit/compile_commands.stamp", "garbage"), (f"{BUILD}/CMakeCache.txt", "truncate"),
    (f"{BUILD}/build.ninja", "garbage"), (f"{BUILD}/cmake_install.cmake", "truncate"),
    (f"{BUILD}/.buildkit/install-*.record", "garbage"), (STATE_FILES[-1], "truncate"),
}


def cases() -> list:
    found = []
    for rel in [*STATE_FILES, *INSTALL_STATE_GLOBS]:
        for damage in DAMAGES:
            marks = [] if (rel, damage) in REPRESENTATIVE else [pytest.mark.hostile]
            found.append(pytest.param(rel, damage, marks=marks, id=f"{rel.removeprefix(BUILD + '/').removeprefix('build/')}-{damage}"))
    return found


@pytest.fixture(scope="module")
def clean_build(test_package, tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    """The fixed project folder, a kept copy of it after a clean develop, and the package
    tree's files then."""
    base = tmp_path_factory.mktemp("state-damage")
    project = test_package("minimal", base / "minimal")
    overlay_venv(base / "venv")  # develop's editable registration goes there, not into the test runner's venv
    develop(project, check=True)
    kept = base / "kept"
    shutil.copytree(project, kept, symlinks=True)
    return project, kept, package_tree(project)


def develop(project: Path, check: bool = False) -> subprocess.CompletedProcess:
    python = project.parent / "venv" / "bin" / "python"
    return run([python, "-m", "buildkit", "develop", project], cwd=project, check=check,
               env=clean_env(HOME=str(project.parent / "home"), TMPDIR=str(project.parent)))


def package_tree(project: Path) -> dict[str, bytes]:
    folder = project / "minimal"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def damage(path: Path, how: str) -> None:
    if how == "truncate":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(random.Random(str(path)).randbytes(600))
    else:
        path.unlink()
        path.mkdir()
        (path / "inside").write_text("a folder where a file belongs")


@pytest.mark.parametrize("relative, how", cases())
def test_damaged_state_recovers_or_fails_with_one_message(clean_build, relative: str, how: str) -> None:
    project, kept, clean_tree = clean_build
    shutil.rmtree(project)
    shutil.copytree(kept, project, symlinks=True)
    targets = sorted(project.glob(relative)) if "*" in relative else [project / relative]
    assert targets and all(t.is_file() for t in targets), f"the clean build has no {relative}"
    for target in targets:
        damage(target, how)

    result = develop(project)
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    if result.returncode != 0:
        assert output.count("buildkit error") <= 1 and output.strip(), output
        return
    assert package_tree(project) == clean_tree, f"exit 0 with another package tree:\n{output}"
    imported = run([sys.executable, "-c", "import minimal; print(minimal.sum([2.0, 3.0]))"], cwd=project, check=False,
                   env=clean_env())
    assert imported.returncode == 0 and imported.stdout.strip() == "5.0", imported.stderr
    # And the develop after it is a plain no-op or build, just as clean.
    again = develop(project)
    assert again.returncode == 0 and "Traceback" not in again.stdout + again.stderr, again.stderr
