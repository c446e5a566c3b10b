"""The hostile corpus: every kind of hostile project through every front end.

One table of (scenario, front end) rows over the hostile test packages
(tests/packages/hostile_install, hostile_links, stable_abi_toggle) and the four ways a
project is built: `buildkit develop`, `pip wheel --no-build-isolation --no-deps`,
`python -m build --no-isolation` (an sdist, then the wheel built from it) and
`buildkit wheels` (what CI publishes with).  Each row checks the exit code, that the
message names the offender and the fix, that no Python traceback is printed, that a
canary folder outside the project (which the hostile rule or link aims at) keeps the
same files with the same bytes, that no byte of the canary (or of a stale module) is in
any wheel or sdist produced, and that the output folder holds no partial wheel.  Every
command runs with a HOME and TMPDIR of the row's own, and must leave that TMPDIR empty.

pip and build run in the test run's own interpreter (buildkit from this checkout, `build`
from the test extra) with no index; develop registers its editable installs in one
overlay venv; `buildkit wheels` makes its build and smoke venvs from the run's wheelhouse.

One row of each kind runs by default, on the cheapest front end for it, and each front
end at least once; the rest are marked ``hostile``:
``pytest -m hostile tests/test_hostile_corpus.py`` runs them (see docs/reliability.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from buildkit_testing.artifacts import archive_members
from buildkit_testing.processes import hermetic, run, squashed, unboxed
from buildkit_testing.projects import add_settings
from buildkit_testing.venvs import overlay_venv

# The canary's bytes: in a file outside the project that links aim at, and in the stale
# module left in the package tree.  None of it may reach a wheel or an sdist.
MARKER = b"hostile-corpus canary 5d1e: bytes from outside the project that must never ship\n"
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
LINK_FIX = "allow-outside-links"
FRONT_ENDS = ("develop", "pip-wheel", "build", "wheels")


# ------------------------------------------------------------------------ scenarios
@dataclass(frozen=True)
class Scenario:
    """A hostile project: which test package, and how a copy of it is made hostile."""

    name: str
    package: str
    # (project, canary folder) -> the environment the build gets besides hermetic()'s
    make_hostile: Callable[[Path, Path], dict[str, str]]
    guarded: tuple[str, ...] = ()  # project folders that must keep their files, byte for byte
    # Refused by the build, not by what the sources are: `python -m build` made its sdist first.
    refused_when_built: bool = False


def _link(project: Path, name: str, target: Path | str) -> None:
    (project / name).symlink_to(target)


def _escaping_install(project: Path, canary: Path) -> dict[str, str]:
    return {"HOSTILE_RULE": "absolute", "HOSTILE_CANARY": str(canary)}


def _escaping_install_code(project: Path, canary: Path) -> dict[str, str]:
    return {"HOSTILE_RULE": "code", "HOSTILE_CANARY": str(canary)}


def _source_link(project: Path, canary: Path) -> dict[str, str]:
    """A link among the C++ sources: only an sdist ships those."""
    _link(project, "csrc/leak.c", canary / "canary.txt")
    return {}


def _package_link(project: Path, canary: Path) -> dict[str, str]:
    _link(project, "minimal/leak.txt", canary / "canary.txt")
    return {}


def _installed_link(project: Path, canary: Path) -> dict[str, str]:
    add_settings(project, f'cmake-defines = {{ HOSTILE_INSTALLED_LINK = "{canary / "canary.txt"}" }}')
    return {}


def _dangling_link(project: Path, canary: Path) -> dict[str, str]:
    _link(project, "minimal/gone.txt", "missing.txt")
    return {}


def _build_dir_on_sources(project: Path, canary: Path) -> dict[str, str]:
    add_settings(project, 'build-dir = "csrc"')
    return {}


def _build_dir_on_canary(project: Path, canary: Path) -> dict[str, str]:
    add_settings(project, f'build-dir = "{canary}"')
    return {}


def _binary_script(project: Path, canary: Path) -> dict[str, str]:
    return {"CMAKE_ARGS": "-DNATIVE_SCRIPT=ON"}


def _stable_abi_beside_versioned(project: Path, canary: Path) -> dict[str, str]:
    """A module for this interpreter's own ABI, left in the package tree (by an earlier
    build or by hand), beside which the build puts its stable-ABI module: Python imports
    the stale one first."""
    (project / "sabitoggle" / f"_mod{EXT_SUFFIX}").write_bytes(b"\x7fELF" + MARKER)
    return {"CMAKE_ARGS": "-DSTABLE_ABI=ON"}


ESCAPING_INSTALL = Scenario("escaping-install", "hostile_install", _escaping_install, refused_when_built=True)
ESCAPING_INSTALL_CODE = Scenario("escaping-install-code", "hostile_install", _escaping_install_code,
                                 refused_when_built=True)
SOURCE_LINK = Scenario("source-link-outside", "hostile_links", _source_link)
PACKAGE_LINK = Scenario("package-link-outside", "hostile_links", _package_link)
INSTALLED_LINK = Scenario("installed-link-outside", "hostile_links", _installed_link, refused_when_built=True)
DANGLING_LINK = Scenario("dangling-link", "hostile_links", _dangling_link)
BUILD_DIR_ON_SOURCES = Scenario("build-dir-on-sources", "hostile_links", _build_dir_on_sources, guarded=("csrc",))
BUILD_DIR_ON_CANARY = Scenario("build-dir-outside", "hostile_links", _build_dir_on_canary)
BINARY_SCRIPT = Scenario("binary-script", "stable_abi_toggle", _binary_script)
STABLE_ABI = Scenario("stable-abi-beside-versioned", "stable_abi_toggle", _stable_abi_beside_versioned)

# What each refusal says: the offender and the fix ({canary} is the row's canary folder).
ESCAPE_NAMED = ("install(FILES) of notes.txt", "{canary} is absolute", "DESTINATION share/<name>",
                "buildkit installed nothing")
ESCAPE_CODE_NAMED = ("install(CODE)", "{canary}/code.txt", "file(WRITE ...)", "a path under `${CMAKE_INSTALL_PREFIX}`",
                     "buildkit installed nothing")
SOURCE_LINK_NAMED = ("csrc/leak.c", "{canary}/canary.txt", "outside the project", LINK_FIX)
PACKAGE_LINK_NAMED = ("minimal/leak.txt", "{canary}/canary.txt", "outside the project", LINK_FIX)
INSTALLED_LINK_NAMED = ("minimal/share/hostile/leak.txt", "{canary}/canary.txt", LINK_FIX)
DANGLING_NAMED = ("minimal/gone.txt", "dangling", "missing.txt", "remove the link")
BUILD_DIR_NAMED = ("csrc is a folder buildkit did not make", "Set [tool.buildkit] build-dir")
BUILD_DIR_OUTSIDE_NAMED = ("build-dir {canary} is a folder buildkit did not make", "Set [tool.buildkit] build-dir")
STALE_NAMED = ("Python would import a stale module", f"sabitoggle/_mod{EXT_SUFFIX}", "Delete each named file")


# ------------------------------------------------------------------- expectations
def _member(members: dict[str, bytes], suffix: str) -> bytes:
    found = [data for name, data in members.items() if name.endswith(suffix)]
    assert len(found) == 1, (suffix, sorted(members))
    return found[0]


def _ships_the_program(members: dict[str, bytes], tmp_path: Path) -> None:
    """The compiled program in the wheel's scripts folder is a program that runs."""
    program = tmp_path / "sabitoggle-native"
    program.write_bytes(_member(members, ".data/scripts/sabitoggle-native"))
    program.chmod(0o755)
    assert run([program]).stdout.strip() == "native program ran"


def _ships_the_fresh_module_only(members: dict[str, bytes], tmp_path: Path) -> None:
    assert _member(members, "sabitoggle/_mod.abi3.so").startswith(b"\x7fELF")
    assert not [name for name in members if name.endswith(EXT_SUFFIX)], sorted(members)


@dataclass(frozen=True)
class Row:
    scenario: Scenario
    front_end: str
    refused: tuple[str, ...] | None  # what the message names; None: the build succeeds
    shipped: Callable[[dict[str, bytes], Path], None] | None = None  # checks what a successful build made
    default: bool = False  # runs without -m hostile

    @property
    def id(self) -> str:
        return f"{self.scenario.name}-{self.front_end}"


ROWS = [
    Row(ESCAPING_INSTALL, "develop", ESCAPE_NAMED, default=True),
    Row(ESCAPING_INSTALL, "pip-wheel", ESCAPE_NAMED),
    Row(ESCAPING_INSTALL, "build", ESCAPE_NAMED),
    Row(ESCAPING_INSTALL, "wheels", ESCAPE_NAMED),
    Row(ESCAPING_INSTALL_CODE, "develop", ESCAPE_CODE_NAMED),
    Row(ESCAPING_INSTALL_CODE, "pip-wheel", ESCAPE_CODE_NAMED),
    Row(ESCAPING_INSTALL_CODE, "build", ESCAPE_CODE_NAMED),
    Row(ESCAPING_INSTALL_CODE, "wheels", ESCAPE_CODE_NAMED),
    Row(SOURCE_LINK, "develop", None),  # the sources stay where they are: nothing ships them
    Row(SOURCE_LINK, "pip-wheel", None),
    Row(SOURCE_LINK, "build", SOURCE_LINK_NAMED),
    Row(SOURCE_LINK, "wheels", None),
    Row(PACKAGE_LINK, "develop", PACKAGE_LINK_NAMED),
    Row(PACKAGE_LINK, "pip-wheel", PACKAGE_LINK_NAMED),
    Row(PACKAGE_LINK, "build", PACKAGE_LINK_NAMED, default=True),
    Row(PACKAGE_LINK, "wheels", PACKAGE_LINK_NAMED),
    Row(INSTALLED_LINK, "develop", INSTALLED_LINK_NAMED),
    Row(INSTALLED_LINK, "pip-wheel", INSTALLED_LINK_NAMED, default=True),
    Row(INSTALLED_LINK, "build", INSTALLED_LINK_NAMED),
    Row(INSTALLED_LINK, "wheels", INSTALLED_LINK_NAMED),
    Row(DANGLING_LINK, "develop", DANGLING_NAMED),
    Row(DANGLING_LINK, "pip-wheel", DANGLING_NAMED),
    Row(DANGLING_LINK, "build", DANGLING_NAMED),
    Row(DANGLING_LINK, "wheels", DANGLING_NAMED, default=True),
    Row(BUILD_DIR_ON_SOURCES, "develop", BUILD_DIR_NAMED, default=True),
    Row(BUILD_DIR_ON_SOURCES, "pip-wheel", BUILD_DIR_NAMED),
    Row(BUILD_DIR_ON_SOURCES, "build", BUILD_DIR_NAMED),
    Row(BUILD_DIR_ON_SOURCES, "wheels", BUILD_DIR_NAMED),
    Row(BUILD_DIR_ON_CANARY, "develop", BUILD_DIR_OUTSIDE_NAMED),
    Row(BUILD_DIR_ON_CANARY, "pip-wheel", BUILD_DIR_OUTSIDE_NAMED),
    Row(BUILD_DIR_ON_CANARY, "build", BUILD_DIR_OUTSIDE_NAMED),
    Row(BUILD_DIR_ON_CANARY, "wheels", BUILD_DIR_OUTSIDE_NAMED),
    Row(BINARY_SCRIPT, "develop", None),
    Row(BINARY_SCRIPT, "pip-wheel", None, _ships_the_program, default=True),
    Row(BINARY_SCRIPT, "build", None, _ships_the_program),
    Row(BINARY_SCRIPT, "wheels", None, _ships_the_program),
    Row(STABLE_ABI, "develop", STALE_NAMED, default=True),
    Row(STABLE_ABI, "pip-wheel", None, _ships_the_fresh_module_only),
    Row(STABLE_ABI, "build", None, _ships_the_fresh_module_only),
    Row(STABLE_ABI, "wheels", None, _ships_the_fresh_module_only),
]


# ---------------------------------------------------------------------- front ends
@pytest.fixture(scope="module")
def develop_python(tmp_path_factory) -> Path:
    """The venv develop registers its editable installs in (one for the module)."""
    return overlay_venv(tmp_path_factory.mktemp("hostile-corpus-venv") / "venv")


def build_with(front_end: str, project: Path, out: Path, env: dict[str, str],
               request: pytest.FixtureRequest) -> subprocess.CompletedProcess:
    """Run ``front_end`` on ``project``, its wheels and sdists (if any) going to ``out``."""
    if front_end == "develop":
        command = [request.getfixturevalue("develop_python"), "-m", "buildkit", "develop", project]
    elif front_end == "pip-wheel":
        command = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", out, project]
    elif front_end == "build":  # an sdist, then the wheel built from it
        command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", out, project]
    else:
        wheelhouse = request.getfixturevalue("wheelhouse")
        command = [sys.executable, "-m", "buildkit", "wheels", project, "--out", out, "--wheelhouse", wheelhouse]
    return run(command, cwd=project, env=env, check=False, timeout=600)


# --------------------------------------------------------------------- the checks
def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry below ``folder``: a file's bytes, a link's target, a folder's mark."""
    entries: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        entries[name] = (f"-> {os.readlink(path)}" if path.is_symlink() else "folder" if path.is_dir()
                         else path.read_bytes())
    return entries


def kinds_made(out: Path) -> list[str]:
    """What ``out`` holds: "sdist", "wheel", or the name of anything else (a partial file)."""
    files = sorted(p.name for p in out.rglob("*") if p.is_file()) if out.is_dir() else []
    return sorted("sdist" if n.endswith(".tar.gz") else "wheel" if n.endswith(".whl") else n for n in files)


# What a successful build of each front end leaves in its output folder.
MADE = {"develop": [], "pip-wheel": ["wheel"], "build": ["sdist", "wheel"], "wheels": ["wheel"]}


@pytest.mark.slow
@pytest.mark.parametrize("row", [pytest.param(row, id=row.id, marks=() if row.default else (pytest.mark.hostile,))
                                 for row in ROWS])
def test_hostile_project(row: Row, test_package, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    project = test_package(row.scenario.package, tmp_path / "project" / row.scenario.package)
    canary = tmp_path / "canary"
    (canary / "inner").mkdir(parents=True)
    (canary / "canary.txt").write_bytes(MARKER)
    (canary / "inner" / "kept.txt").write_bytes(b"kept\n")
    env = hermetic(tmp_path, COLUMNS="200", PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull,
                   PIP_DISABLE_PIP_VERSION_CHECK="1", **row.scenario.make_hostile(project, canary))
    def untouchable() -> dict[str, dict[str, bytes | str]]:
        return {"canary": snapshot(canary), **{name: snapshot(project / name) for name in row.scenario.guarded}}

    before = untouchable()
    out = tmp_path / "out"

    result = build_with(row.front_end, project, out, env, request)

    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert untouchable() == before, "the canary, or a source folder, changed"
    members = archive_members(out) if out.is_dir() else {}
    assert not [name for name, data in members.items() if MARKER.strip() in data], "the canary's bytes shipped"
    assert list((tmp_path / "tmp").iterdir()) == [], "a temporary file was left behind"
    made = kinds_made(out)
    if row.refused is not None:
        assert result.returncode != 0, output
        message = squashed(unboxed(output))
        for phrase in row.refused:
            assert squashed(phrase.replace("{canary}", str(canary))) in message, (phrase, unboxed(output))
        sdist_first = row.front_end == "build" and row.scenario.refused_when_built
        assert made == (["sdist"] if sdist_first else []), f"{made} left in {out}"
        return
    assert result.returncode == 0, output
    assert made == MADE[row.front_end], made
    if row.shipped is not None:
        row.shipped(members, tmp_path)
