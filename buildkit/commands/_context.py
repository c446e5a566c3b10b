"""The project context a command works with: ``distribution.buildkit`` or a stand-in.

``buildkit.setup()`` hangs its :class:`~buildkit.project.Project` on the
distribution.  A project that calls ``setuptools.setup(cmdclass=...)`` itself, or a
bare ``python setup.py sdist`` of such a project, has none; the commands then load
settings and options from the current folder, which is what ``setup()`` would do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..options import BuildOptions, WheelMode, load_options, option_keys
from ..settings import ProjectSettings, load_settings


class Context(Protocol):
    """What the commands read; read-only, as :class:`~buildkit.project.Project` computes some of it."""

    @property
    def settings(self) -> ProjectSettings: ...
    @property
    def options(self) -> BuildOptions: ...
    @property
    def mode(self) -> WheelMode: ...
    @property
    def version(self) -> str: ...
    @property
    def build_dir(self) -> Path: ...
    @property
    def install_manifest(self) -> list[Path]: ...


@dataclass
class MinimalContext:
    """What the commands read from a Project, without any of its build machinery."""

    settings: ProjectSettings
    options: BuildOptions
    mode: WheelMode
    version: str
    build_dir: Path
    install_manifest: list[Path] = field(default_factory=list)


def project_context(distribution: Any) -> Context:
    """``distribution.buildkit`` when ``buildkit.setup()`` ran, else one loaded from the cwd."""
    context = getattr(distribution, "buildkit", None)
    if context is not None:
        return context
    from ..clean import read_install_manifest

    settings = load_settings(Path.cwd(), option_keys())
    options = load_options(settings)
    version = distribution.get_version() if distribution is not None else "0.0.0"
    return MinimalContext(settings=settings, options=options, mode=options.wheel_mode, version=version,
                          build_dir=settings.build_dir, install_manifest=read_install_manifest(settings.build_dir))
