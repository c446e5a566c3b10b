"""The fixture both test trees share (tests/ and examples/tensorlet/test): the run's
one local wheelhouse, which every venv a test makes installs from with --no-index."""

from __future__ import annotations

from pathlib import Path

import pytest
from buildkit_testing.venvs import make_wheelhouse


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """The run's one local wheelhouse (see buildkit_testing.venvs.make_wheelhouse)."""
    return make_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))
