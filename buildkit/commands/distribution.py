"""The Distribution class that carries buildkit's Project through setuptools."""

from __future__ import annotations

from typing import Any

from setuptools.dist import Distribution


class BuildkitDistribution(Distribution):
    """A Distribution that carries the buildkit Project and keeps mode-dependent metadata.

    ``[project]`` in pyproject.toml is applied after ``setup()``'s arguments, so a
    static ``name`` would overwrite the library-only distribution's name; the mode
    decides the name, so it is restored after the config files are read.
    """

    pending_project: Any = None

    def __init__(self, attrs: dict | None = None):
        self.buildkit = type(self).pending_project
        type(self).pending_project = None
        self._buildkit_name = (attrs or {}).get("name")
        super().__init__(attrs)

    def parse_config_files(self, *args, **kwargs) -> None:
        super().parse_config_files(*args, **kwargs)
        if self._buildkit_name:
            self.metadata.name = self._buildkit_name
