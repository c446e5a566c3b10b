"""Metadata that setuptools would drop or stop on, said by buildkit.

With a ``[project]`` table, setuptools ignores what setup.cfg says for a field the table
neither sets nor lists in ``dynamic`` (PEP 621), with a warning pip hides; for
``long_description`` it stops with an AttributeError after the build (torch_scatter's
setup.cfg, once ported with a ``[project]`` table).  buildkit names each dropped field,
refuses the long description before CMake starts, and gives setuptools' own validation
errors as one error.  tests/packages/verdemo configures with ``LANGUAGES NONE``: no compiler.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from buildkit.config.settings import load_settings
from buildkit.errors import ConfigError
from buildkit.package.setup_cfg_metadata import dropped_fields, fields_in_setup_cfg
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, unboxed

TORCH_SCATTER_LIKE_CFG = """\
[metadata]
long_description = file: README.md
long_description_content_type = text/markdown
classifiers =
    Development Status :: 5 - Production/Stable
    Programming Language :: Python

[options]
python_requires = >=3.8

[aliases]
test = pytest
"""


def develop(project: Path, check: bool = False):
    return run([sys.executable, "-m", "buildkit", "develop", project], env=clean_env(), check=check)


def set_dynamic(project: Path, dynamic: str) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(re.sub(r"^dynamic = .*$", f"dynamic = {dynamic}", pyproject.read_text(), flags=re.M))


def test_the_fields_setup_cfg_sets(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text(TORCH_SCATTER_LIKE_CFG + "\n[options.entry_points]\nconsole_scripts =\n"
                                        "    x = y:z\n")
    assert fields_in_setup_cfg(tmp_path / "setup.cfg") == {
        "readme": "[metadata] long_description", "classifiers": "[metadata] classifiers",
        "requires-python": "[options] python_requires", "entry-points": "[options.entry_points]"}
    # Only fields the table neither sets nor declares dynamic are dropped; no table, nothing dropped.
    assert dropped_fields(tmp_path, {"name", "requires-python"}, {"readme"}) == {
        "classifiers": "[metadata] classifiers", "entry-points": "[options.entry_points]"}
    assert dropped_fields(tmp_path, frozenset(), frozenset()) == {}


def test_an_unreadable_setup_cfg_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[metadata\nname = x\n")
    with pytest.raises(ConfigError, match=r"setup\.cfg cannot be read"):
        fields_in_setup_cfg(tmp_path / "setup.cfg")


@pytest.mark.slow
def test_a_long_description_setuptools_would_stop_on_is_refused_before_cmake(test_package, tmp_path: Path) -> None:
    project = test_package("verdemo", tmp_path / "verdemo")
    (project / "setup.cfg").write_text(TORCH_SCATTER_LIKE_CFG)
    set_dynamic(project, '["version"]')
    result = develop(project)
    assert result.returncode != 0
    output = unboxed(result.stdout + result.stderr)
    assert "Traceback" not in output and "buildkit bug" not in output, output
    assert "setup.cfg sets [metadata] long_description, but pyproject.toml's [project] neither sets `readme`" \
        in output, output
    assert not (build_folder(project) / "CMakeCache.txt").exists()  # refused before the configure

    # With "readme" dynamic again, the build goes through; classifiers and python_requires are named.
    set_dynamic(project, '["version", "readme"]')
    output = unboxed(develop(project, check=True).stderr)
    assert "setup.cfg [metadata] classifiers is ignored: pyproject.toml's [project] neither sets `classifiers`" \
        in output, output
    assert "setup.cfg [options] python_requires is ignored" not in output  # [project] sets requires-python


@pytest.mark.slow
def test_setuptools_validation_is_one_error(test_package, tmp_path: Path) -> None:
    project = test_package("verdemo", tmp_path / "verdemo")
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('license = "MIT"', 'license = "MIT"\nkeywords = 3'))
    result = develop(project)
    output = unboxed(result.stdout + result.stderr)
    assert result.returncode != 0
    assert "Traceback" not in output and "buildkit bug" not in output, output
    assert "setuptools refused the project's metadata: invalid pyproject.toml config: `project.keywords`" in output


def test_a_project_without_a_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match=r"has no `version` and does not list \"version\" in `dynamic`"):
        load_settings(tmp_path)
