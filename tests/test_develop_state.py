"""The develop state's inputs (frontends/develop_state.py): what makes a no-op develop run
setuptools again to refresh the `_C` stub and the editable registration."""

from __future__ import annotations

from pathlib import Path

from buildkit.frontends.develop_state import inputs_fingerprint
from buildkit.project import Project
from buildkit_testing.projects import write_files

PYPROJECT = """\
[project]
name = "statepkg"
version = "1.0"
requires-python = ">=3.11"
dynamic = ["readme"]

[tool.buildkit]
package = "statepkg"
"""


def fingerprint(root: Path) -> str:
    return inputs_fingerprint(Project.load(root), register=True)


def test_the_readme_and_setup_cfg_are_inputs(tmp_path):
    """The registration's METADATA holds the README and what setup.cfg declares."""
    root = write_files(tmp_path / "statepkg", {"pyproject.toml": PYPROJECT, "README.md": "one\n",
                                               "statepkg/__init__.py": ""})
    first = fingerprint(root)
    assert fingerprint(root) == first
    (root / "README.md").write_text("two\n")
    second = fingerprint(root)
    assert second != first
    (root / "setup.cfg").write_text("[metadata]\nkeywords = x\n")
    assert fingerprint(root) not in (first, second)
