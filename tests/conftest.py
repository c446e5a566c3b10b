"""Fixtures for buildkit's tests; the helpers they use live in buildkit_testing.py."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from buildkit_testing import (  # noqa: F401 - re-exported for tests that use them as fixtures' helpers
    REPO, WHEEL_CACHE, WHEELHOUSE_REQUIREMENTS, copy_example, make_venv, overlay_venv, pip_install, run,
    venv_env,
)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """buildkit's wheel (built once from this checkout) plus its dependencies."""
    WHEEL_CACHE.mkdir(exist_ok=True)
    have = {p.name.split("-")[0].lower() for p in WHEEL_CACHE.glob("*.whl")}
    wanted = {r.split(">")[0].split("=")[0].lower() for r in WHEELHOUSE_REQUIREMENTS}
    if not wanted <= have:
        run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", WHEEL_CACHE,
             *WHEELHOUSE_REQUIREMENTS])
    house = tmp_path_factory.mktemp("wheelhouse")
    for wheel in WHEEL_CACHE.glob("*.whl"):
        if not wheel.name.startswith("setuptools_buildkit-"):
            shutil.copy2(wheel, house)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", house, REPO])
    return house


@pytest.fixture
def minimal_project(tmp_path) -> Path:
    """A private copy of examples/minimal, without build outputs."""
    return copy_example("minimal", tmp_path / "minimal")


@pytest.fixture
def overlay_python(tmp_path) -> Path:
    return overlay_venv(tmp_path / "venv")


@pytest.fixture(scope="session")
def buildkit_venv(wheelhouse, tmp_path_factory) -> Path:
    """A fresh venv with buildkit installed (not editable) from the wheelhouse, plus
    setuptools and wheel for --no-build-isolation builds; returns its python.  Shared by
    the tests that need a real installed buildkit: each removes what it installs."""
    python = make_venv(tmp_path_factory.mktemp("buildkit-venv") / "venv")
    pip_install(python, wheelhouse, "setuptools-buildkit", "setuptools", "wheel",
                env=venv_env(python, wheelhouse))
    return python


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder searched before the rest of PATH, for fake tools."""
    directory = tmp_path / "fake-bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    return directory
