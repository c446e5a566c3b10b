"""``python setup.py clean [--all] [--dry-run]``: :mod:`buildkit.frontends.clean` as a setuptools command."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from setuptools import Command

from buildkit.frontends.clean import clean_project
from buildkit.frontends.setuptools.distribution import project_of


class Clean(Command):
    description = "remove build outputs; --all also removes what .gitignore lists"
    user_options: ClassVar[list[tuple[str, str | None, str]]] = [
        ("all", "a", "also remove untracked files that .gitignore lists (never tracked files or venvs)"),
        ("dry-run", "n", "list what would be removed and remove nothing"),
    ]
    boolean_options: ClassVar[list[str]] = ["all", "dry-run"]

    def initialize_options(self) -> None:
        self.all = False
        self.dry_run = False

    def finalize_options(self) -> None:
        self.all = bool(self.all)
        self.dry_run = bool(self.dry_run)

    def run(self) -> None:
        project = project_of(self.distribution)
        # setuptools' own build tree (build/lib.*, build/temp.*) may sit apart from
        # the CMake build folder when [tool.buildkit] build-dir moves the latter.
        build_base = Path(self.get_finalized_command("build").build_base).absolute()
        clean_project(project.settings, include_ignored=self.all, dry_run=self.dry_run,
                      install_manifest=project.install_manifest, extra=[build_base])
