"""setup.cfg metadata that pyproject.toml's ``[project]`` makes setuptools drop, said before the build.

When pyproject.toml has a ``[project]`` table, a metadata field it neither sets nor lists in
``dynamic`` is the table's to decide (PEP 621): setuptools ignores what setup.cfg says for it,
with a warning that pip hides.  For ``long_description`` it does worse: setuptools 80 to 84
reset the field to ``None`` and then stop in its own code (``AttributeError: 'NoneType' object
has no attribute 'get'``), after the CMake build has finished.  torch_scatter's setup.cfg is
such a case once a ``[project]`` table is added to port it.

So, before a build: the dropped fields are named, and a long description that would crash
setuptools stops the build now, with the fix.
"""

from __future__ import annotations

import configparser
from collections.abc import Collection
from pathlib import Path

from buildkit._util import console
from buildkit.errors import ConfigError

# (setup.cfg section, key) -> the [project] field setuptools fills from it (its
# _apply_pyprojecttoml._PREVIOUSLY_DEFINED, read from the setup.cfg spelling).
CFG_FIELDS: dict[tuple[str, str], str] = {
    ("metadata", "version"): "version",
    ("metadata", "description"): "description",
    ("metadata", "summary"): "description",
    ("metadata", "long_description"): "readme",
    ("metadata", "long-description"): "readme",
    ("metadata", "license"): "license",
    ("metadata", "author"): "authors",
    ("metadata", "author_email"): "authors",
    ("metadata", "maintainer"): "maintainers",
    ("metadata", "maintainer_email"): "maintainers",
    ("metadata", "keywords"): "keywords",
    ("metadata", "classifiers"): "classifiers",
    ("metadata", "classifier"): "classifiers",
    ("metadata", "project_urls"): "urls",
    ("options", "python_requires"): "requires-python",
    ("options", "install_requires"): "dependencies",
}
# Sections whose presence alone sets a field.
CFG_SECTIONS: dict[str, str] = {
    "options.extras_require": "optional-dependencies",
    "options.entry_points": "entry-points",
}


def fields_in_setup_cfg(path: Path) -> dict[str, str]:
    """The [project] fields ``path`` sets, each with the setup.cfg key that sets it."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as error:
        raise ConfigError(f"{path} cannot be read: {error}.",
                          "setuptools reads it too: fix its syntax, or remove it if pyproject.toml says "
                          "everything.") from None
    found: dict[str, str] = {}
    for (section, key), project_field in CFG_FIELDS.items():
        if parser.has_option(section, key) and parser.get(section, key).strip():
            found.setdefault(project_field, f"[{section}] {key}")
    for section, project_field in CFG_SECTIONS.items():
        if parser.has_section(section) and parser.items(section):
            found.setdefault(project_field, f"[{section}]")
    return found


def dropped_fields(root: Path, project_fields: Collection[str], dynamic: Collection[str]) -> dict[str, str]:
    """The [project] fields setup.cfg sets that setuptools will drop, each with its setup.cfg key."""
    path = root / "setup.cfg"
    if not project_fields or not path.is_file():  # no [project] table (a buildkit.torch setup.py): setup.cfg rules
        return {}
    return {field: key for field, key in fields_in_setup_cfg(path).items()
            if field not in project_fields and field not in dynamic}


def refuse_crashing_readme(root: Path, project_fields: Collection[str], dynamic: Collection[str]) -> None:
    """Before a build: a long description setuptools would crash on stops it now."""
    _refuse_readme(root, dropped_fields(root, project_fields, dynamic))


def check(root: Path, project_fields: Collection[str], dynamic: Collection[str]) -> None:
    """Before setuptools runs: the crashing long description refused, each other dropped field named
    (setup.cfg read once)."""
    dropped = dropped_fields(root, project_fields, dynamic)
    _refuse_readme(root, dropped)
    for project_field, key in sorted(dropped.items()):
        console.warn(f"setup.cfg {key} is ignored: pyproject.toml's [project] neither sets `{project_field}` nor "
                     f"lists it in `dynamic`, so setuptools drops it (PEP 621); move it to [project]")


def _refuse_readme(root: Path, dropped: dict[str, str]) -> None:
    if "readme" in dropped:
        raise ConfigError(
            f"{root / 'setup.cfg'} sets {dropped['readme']}, but pyproject.toml's [project] neither sets `readme` "
            "nor lists it in `dynamic`: setuptools would ignore it, then stop with a traceback after the build.",
            "Move it to [project] (`readme = \"README.md\"`), or add \"readme\" to [project] `dynamic` and "
            "buildkit fills it from [tool.buildkit] readme (README.md by default).")
