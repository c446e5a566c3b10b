"""Fixtures for buildkit's tests; the helpers they use live in buildkit_testing.py, and
the run's one wheelhouse (shared with tensorlet's tests) in the repository's conftest.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from buildkit_testing import (
    copy_example,
    make_venv,
    overlay_venv,
    pip_install,
    venv_env,
)


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
