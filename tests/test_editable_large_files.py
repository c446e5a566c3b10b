"""Editable installs never copy or zip a large file of the package tree (issue 14): the
PEP 660 editable wheel (what pip and uv install) and `buildkit develop`'s registration
stay small, and the file is reached where CMake installed it."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit_testing.processes import clean_env, run
from buildkit_testing.venvs import site_packages

pytestmark = pytest.mark.slow

SIZE = 4 << 20
SMALL = 64 << 10  # far above what an editable wheel or registration holds, far below SIZE


@pytest.fixture
def project(test_package) -> Path:
    root = test_package("large_data")
    # Random bytes: deflate cannot shrink them, so a copy inside a wheel would show in its size.
    (root / "weights.bin").write_bytes(os.urandom(SIZE))
    return root


def files_of_size(*folders: Path) -> set[Path]:
    """Regular files of exactly SIZE bytes under ``folders`` (a symlink is not a copy)."""
    found = set()
    for folder in folders:
        for current, _, names in os.walk(folder):
            for name in names:
                path = Path(current, name)
                if path.is_file() and not path.is_symlink() and path.stat().st_size == SIZE:
                    found.add(path)
    return found


def reached_at(python: Path, cwd: Path) -> Path:
    """Where the installed package's lib/weights.bin is, as the interpreter reaches it."""
    done = run([python, "-c", "import bigdata, os; print(os.path.realpath(os.path.join("
                                "os.path.dirname(bigdata.__file__), 'lib', 'weights.bin')))"], cwd=cwd, env=clean_env())
    return Path(done.stdout.strip())


@pytest.mark.parametrize("editable_mode", [None, "strict"])
def test_the_editable_wheel_holds_no_copy_and_the_file_is_reached_in_place(project, overlay_python, tmp_path,
                                                                           editable_mode):
    settings = {"editable_mode": editable_mode} if editable_mode else {}
    out = tmp_path / "wheels"
    done = run([overlay_python, "-c", "import sys, buildkit.build_meta as backend; "
                                      f"print(backend.build_editable(sys.argv[1], {settings!r}))", out],
               cwd=project, env=clean_env())
    wheel = out / done.stdout.strip().splitlines()[-1]
    installed = project / "bigdata" / "lib" / "weights.bin"
    assert installed.stat().st_size == SIZE  # the build installed it into the package tree

    assert wheel.stat().st_size < SMALL
    with zipfile.ZipFile(wheel) as archive:
        members = archive.infolist()
    assert max(m.file_size for m in members) < SMALL
    assert not [m.filename for m in members if m.filename.endswith("weights.bin")]

    run([sys.executable, "-m", "uv", "pip", "install", "--python", overlay_python, "--no-deps", "--offline", wheel],
        env=clean_env(UV_CACHE_DIR=str(tmp_path / "uv-cache")))
    assert reached_at(overlay_python, tmp_path) == installed.resolve()
    # The source and CMake's install are the only copies: none in the venv, the build folder or the wheel's.
    assert files_of_size(project, overlay_python.parents[1]) == {project / "weights.bin", installed}


def test_buildkit_develop_registers_without_a_copy(project, overlay_python, tmp_path):
    run([overlay_python, "-m", "buildkit", "develop", project], env=clean_env())
    installed = project / "bigdata" / "lib" / "weights.bin"
    assert reached_at(overlay_python, tmp_path) == installed.resolve()
    [info] = site_packages(overlay_python).glob("bigdata-*.dist-info")
    assert sum(p.stat().st_size for p in info.iterdir()) < SMALL
    assert files_of_size(project, overlay_python.parents[1]) == {project / "weights.bin", installed}
