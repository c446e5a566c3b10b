"""The fixture both test trees share (tests/ and examples/tensorlet/test): the run's
one local wheelhouse, which every venv a test makes installs from with --no-index."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
from buildkit_testing import make_wheelhouse  # noqa: E402


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """The run's one local wheelhouse (see buildkit_testing.make_wheelhouse)."""
    return make_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))
