"""Where things are in the repository."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
# For users: built by tests only in their own smoke tests (tests/test_examples.py).
EXAMPLES = REPO / "examples"
# What the tests build, one folder a scenario (see the `test_package` fixture).
TEST_PACKAGES = REPO / "tests" / "packages"
