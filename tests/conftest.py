"""Fixtures for buildkit's tests: the one way to get a test project (`test_package`),
venvs, and fake tools.  The helpers live in the buildkit_testing package
(tests/utils), the run's one wheelhouse (shared with tensorlet's tests) in the
repository's conftest.py."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from buildkit.builder.toolchain import tools as toolchain
from buildkit_testing.processes import run
from buildkit_testing.projects import copy_test_package
from buildkit_testing.torch_venvs import ROWS, torch_venv
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, overlay_venv, pip_install, pip_into, venv_env


@pytest.fixture(scope="session")
def test_package(tmp_path_factory) -> Callable[..., Path]:
    """``test_package(scenario, target=None)``: a private copy of tests/packages/<scenario>,
    without build outputs, in ``target`` (by default a new temporary folder's
    ``<scenario>``: the project folder keeps its name).  Session-scoped so that module
    fixtures can build in one too."""

    def copy(scenario: str, target: Path | None = None) -> Path:
        return copy_test_package(scenario, target or tmp_path_factory.mktemp(scenario) / scenario)

    return copy


@pytest.fixture(scope="session", params=ROWS)
def torch_python(request, tmp_path_factory, wheelhouse: Path) -> Path:
    """A fresh venv with a real torch (the newest on the package index, then the pinned older
    one: buildkit_testing.torch_venvs) and buildkit; its python.  One per row for the session:
    the torch-marked modules share them."""
    return torch_venv(request.param, tmp_path_factory.mktemp(f"torch-{request.param}"), wheelhouse)


# A shell that starts a command in the background (`bash .ci/run &`, a CI runner's job)
# starts it with SIGINT ignored, and every child inherits that: Python then never raises
# KeyboardInterrupt, and the fault tests' Ctrl-C rows would see builds that cannot be
# interrupted. A handler of this process's own becomes the default again in each child.
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def overlay_python(tmp_path) -> Path:
    return overlay_venv(tmp_path / "venv")


@pytest.fixture(scope="session")
def buildkit_venv(wheelhouse, tmp_path_factory) -> Path:
    """A fresh venv with buildkit installed (not editable) from the wheelhouse, plus
    setuptools and wheel for --no-build-isolation builds; returns its python.  Shared by
    the tests that need a real installed buildkit: each removes what it installs."""
    python = make_venv(tmp_path_factory.mktemp("buildkit-venv") / "venv")
    pip_install(python, wheelhouse, *BUILDKIT_WITH_TOOLS, "setuptools", "wheel",
                env=venv_env(python, wheelhouse))
    return python


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder searched before the rest of PATH, for fake tools."""
    directory = tmp_path / "fake-bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    return directory


@pytest.fixture
def session_probe_cache(tmp_path_factory, monkeypatch) -> Path:
    """One toolchain probe cache for the test session, away from the user's ~/.cache."""
    path = tmp_path_factory.getbasetemp() / "toolchain-cache.json"
    monkeypatch.setattr(toolchain, "default_cache_path", lambda: path)
    return path



PYENV = Path.home() / ".pyenv" / "versions"


def pyenv_python(version: str) -> Path:
    """pyenv's newest Python ``version`` (``"3.12"``); the test skips where this machine lacks it."""
    found = sorted(PYENV.glob(f"{version}.*/bin/python3"))
    if not found:
        pytest.skip(f"needs Python {version} from pyenv ({PYENV}/{version}.*), which this machine lacks")
    return found[-1]


@pytest.fixture(scope="session")
def venvs(wheelhouse: Path, tmp_path_factory) -> Callable[[str], Path]:
    """``venvs("3.12")``: a venv of pyenv's Python 3.12 with buildkit installed from the
    wheelhouse (made once per session); skips where pyenv has no such Python."""
    made: dict[str, Path] = {}

    def venv_for(version: str) -> Path:
        if version not in made:
            base = pyenv_python(version)
            folder = tmp_path_factory.mktemp(f"venv{version}") / "venv"
            run([base, "-m", "venv", "--without-pip", folder])
            python = folder / "bin" / "python"
            pip_into(python, wheelhouse, "install", "-q", *BUILDKIT_WITH_TOOLS)
            made[version] = python
        return made[version]

    return venv_for
