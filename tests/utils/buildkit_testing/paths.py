"""Where things are in the repository, and where a project's build goes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from buildkit._util.interpreter import soabi

REPO = Path(__file__).resolve().parents[3]
# For users: built by tests only in their own smoke tests (tests/test_examples.py).
EXAMPLES = REPO / "examples"
# What the tests build, one folder a scenario (see the `test_package` fixture).
TEST_PACKAGES = REPO / "tests" / "packages"


def build_folder(project: Path, python: str | Path | None = None) -> Path:
    """The default build folder of ``project`` (``build/{soabi}``) under the interpreter
    ``python`` (default: this one; a venv of the same Python shares its key)."""
    if python is None:
        key = soabi()
    else:
        probe = "from buildkit._util.interpreter import soabi; print(soabi())"
        key = subprocess.run([str(python), "-c", probe], check=True, capture_output=True, text=True).stdout.strip()
    return project / "build" / key
