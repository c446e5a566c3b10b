"""The Distribution that carries buildkit's Project through setuptools, and how commands find it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from setuptools.dist import Distribution

from buildkit.config.value_rules import SCRIPT_NAME_FORM, is_script_name
from buildkit.errors import ConfigError
from buildkit.project import Project


class BuildkitDistribution(Distribution):
    """A Distribution that carries the buildkit Project and keeps mode-dependent metadata.

    ``buildkit.setup()`` passes ``functools.partial(BuildkitDistribution, project=...)``
    as ``distclass``, so each distribution gets its own project.  ``[project]`` in
    pyproject.toml is applied after ``setup()``'s arguments, so a static ``name``
    would overwrite the library-only distribution's name; the mode decides the
    name, so it is restored after the config files are read.
    """

    entry_points: dict[str, Any] | str | None  # setup()'s keyword, set by setuptools: not in its stubs

    def __init__(self, attrs: dict[str, Any] | None = None, *, project: Project | None = None):
        self.buildkit = project
        self._buildkit_name = (attrs or {}).get("name")
        super().__init__(attrs)

    def parse_config_files(self, *args: Any, **kwargs: Any) -> None:
        super().parse_config_files(*args, **kwargs)
        if self._buildkit_name:
            self.metadata.name = self._buildkit_name
        # [project.scripts] are read by now, setup()'s entry points were given: every script is known.
        if isinstance(self.entry_points, dict):  # a string (an ini text) is setuptools' to parse
            refuse_bad_script_names(self.entry_points)


def refuse_bad_script_names(entry_points: dict[str, Any]) -> None:
    """Each console script's name becomes a file and a command: one that is not an
    entry-point name (a `/`, a space, a `;`) stops the build, named."""
    for group in ("console_scripts", "gui_scripts"):
        declared = entry_points.get(group) or ()
        for line in declared.splitlines() if isinstance(declared, str) else declared:
            if not str(line).strip():
                continue
            name = str(line).partition("=")[0].strip()
            if not is_script_name(name):
                raise ConfigError(f"The script name {name!r} ({group}: {str(line).strip()!r}) is not a valid "
                                  f"entry-point name: it may hold only {SCRIPT_NAME_FORM}.",
                                  "Rename it in [project.scripts] (or [tool.buildkit] scripts, or setup()'s "
                                  "entry_points), e.g. `pkg-info`.")


def project_of(distribution: Distribution) -> Project:
    """The distribution's buildkit Project.

    A project that calls ``setuptools.setup(cmdclass=buildkit's)`` itself has none
    on its distribution: it is loaded from the working folder, as ``setup()``
    would, and kept there for the other commands of the same run.
    """
    project: Project | None = getattr(distribution, "buildkit", None)
    if project is None:
        project = Project.load(Path.cwd())
        distribution.buildkit = project  # type: ignore[attr-defined]  # buildkit's own attribute on setuptools' distribution
    return project
