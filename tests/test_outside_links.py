"""Nothing from outside the project ships: a hostile copy of tests/packages/minimal, built for real.

Each row makes the project hostile in one way (a link in the package folder to a canary
file outside the project or to /etc/passwd, a link to a folder outside, a dangling link, a
link CMake installs, a readme, a license or a script name that leads out), builds a wheel
(``setup.py bdist_wheel``, staged like ``pip wheel``) or an sdist, and checks the exit
code, that the message names the offender and the fix, that no Python traceback is
printed, and that no byte of the canary is in anything produced.  The links are made at
test time: a checkout must never hold a link to /etc.

Rows refused before CMake runs take a fraction of a second; the rows that build the C++
code (an installed link, and the links that ship) are marked ``slow``: all of them
together take about 15 s.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from buildkit_testing.artifacts import archive_members
from buildkit_testing.processes import clean_env, setup_py, squashed, unboxed
from buildkit_testing.projects import add_settings

CANARY = b"canary-7f3c: this line lives outside the project and must never ship\n"
HINT = "allow-outside-links"


@dataclass(frozen=True)
class Row:
    name: str
    make_hostile: Callable[[Path, Path], None]  # (project, canary file outside it)
    command: str  # "wheel" or "sdist"
    refused: tuple[str, ...] | None  # phrases of the message; None: the build succeeds
    marks: tuple = ()


def _link(project: Path, name: str, target: Path | str) -> None:
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


def _replace(project: Path, old: str, new: str) -> None:
    pyproject = project / "pyproject.toml"
    assert old in pyproject.read_text()
    pyproject.write_text(pyproject.read_text().replace(old, new))


SLOW = pytest.mark.slow
ROWS = [
    Row("package link to a file outside", lambda p, c: _link(p, "minimal/leak.txt", c), "wheel",
        ("minimal/leak.txt", "canary.txt", "outside the project", HINT)),
    Row("package link to /etc/passwd", lambda p, c: _link(p, "minimal/passwd.txt", "/etc/passwd"), "wheel",
        ("minimal/passwd.txt", "/etc/passwd", HINT)),
    Row("package link to a folder outside", lambda p, c: _link(p, "minimal/data", c.parent), "wheel",
        ("minimal/data", str(Path("outside")), HINT)),
    Row("package link climbing out with ..", lambda p, c: _link(p, "minimal/up.txt", os.path.relpath(c, p / "minimal")),
        "wheel", ("minimal/up.txt", "'../../", "outside/canary.txt", HINT)),
    Row("dangling package link", lambda p, c: _link(p, "minimal/gone.txt", "missing.txt"), "wheel",
        ("minimal/gone.txt", "dangling", "missing.txt")),
    Row("readme outside the project", lambda p, c: add_settings(p, 'readme = "../outside/canary.txt"'), "wheel",
        ("[tool.buildkit] readme must be a path inside the project", "../outside/canary.txt")),
    Row("readme linked outside", lambda p, c: ((p / "README.md").unlink(), _link(p, "README.md", c)), "sdist",
        ("README.md", "canary.txt", HINT)),
    Row("license outside the project", lambda p, c: _replace(p, "third_party/fastsum/LICENSE", str(c)), "wheel",
        ("[tool.buildkit] licenses must be a list of paths inside the project", "canary.txt")),
    Row("bad script name", lambda p, c: _replace(p, "minimal-info", "../bin/minimal info;id"), "wheel", ("scripts[0].name must be a script name", "../bin/minimal info;id")),
    Row("sdist link to a file outside", lambda p, c: _link(p, "csrc/leak.c", c), "sdist",
        ("csrc/leak.c", "canary.txt", HINT)),
    Row("dangling sdist link", lambda p, c: _link(p, "csrc/gone.c", "missing.c"), "sdist",
        ("csrc/gone.c", "dangling")),
    Row("installed link via CMake", lambda p, c: add_settings(p, f'cmake-defines = {{ HOSTILE_INSTALLED_LINK = "{c}" }}'),
        "wheel", ("minimal/share/hostile/leak.txt", "canary.txt", HINT), (SLOW,)),
    Row("inside-project link ships as content",
        lambda p, c: (_link(p, "minimal/license_copy.txt", Path("../LICENSE"))), "wheel", None, (SLOW,)),
    Row("allowed outside link ships as content",
        lambda p, c: (_link(p, "minimal/leak.txt", c), add_settings(p, 'allow-outside-links = ["minimal/leak.txt"]')),
        "wheel", None, (SLOW,)),
]


@pytest.mark.parametrize("row", [pytest.param(row, id=row.name, marks=row.marks) for row in ROWS])
def test_nothing_from_outside_ships(row: Row, test_package, overlay_python, tmp_path):
    if "/etc/passwd" in row.name and not os.path.isfile("/etc/passwd"):
        pytest.skip("this machine has no /etc/passwd")
    project = test_package("hostile_links")
    canary = tmp_path / "outside" / "canary.txt"
    canary.parent.mkdir()
    canary.write_bytes(CANARY)
    row.make_hostile(project, canary)
    home, temporary, dist = tmp_path / "home", tmp_path / "tmp", tmp_path / "dist"
    home.mkdir()
    temporary.mkdir()
    command = ["bdist_wheel"] if row.command == "wheel" else ["sdist"]
    result = setup_py(overlay_python, project, *command, "--dist-dir", dist,
                      env=clean_env(HOME=str(home), TMPDIR=str(temporary)), check=False)
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    produced = archive_members(dist) if dist.is_dir() else {}
    if row.refused is None:
        assert result.returncode == 0, output
        assert produced
        if "allowed" in row.name:  # the setting says its content ships: it does, and only there
            assert [name for name, data in produced.items() if CANARY in data] == [
                next(name for name in produced if name.endswith("minimal/leak.txt"))]
        else:
            assert any(name.endswith("minimal/license_copy.txt") and data == (project / "LICENSE").read_bytes()
                       for name, data in produced.items())
        return
    assert result.returncode != 0, output
    text = squashed(unboxed(output))  # squashed: the box wraps a long path anywhere
    for phrase in row.refused:
        assert squashed(phrase) in text, (phrase, unboxed(output))
    assert not [name for name, data in produced.items() if CANARY in data]
    if "/etc/passwd" in row.name:
        passwd = Path("/etc/passwd").read_bytes()
        assert not [name for name, data in produced.items() if passwd and passwd in data]
