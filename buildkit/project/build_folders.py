"""The build folders of one command (the primary one and a build-type list's others) and what
their installs wrote, read once per command from their install manifests."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path

from buildkit.builder.build_state import build_type_dirs
from buildkit.builder.install.manifest import InstallManifests
from buildkit.project.build_types import build_type_folder


class BuildFolders:
    """The primary build folder, the folder of each other type of a ``build-type`` list that this
    command builds, and their install manifests (also those of listed types this command does not
    build: what they installed into the package tree is no source to stage)."""

    def __init__(self, primary: Path, extra_types: Iterable[str], install_root: Path) -> None:
        self.primary = primary
        self.install_root = install_root  # where this command's install writes (package or staging tree)
        self._extra_types = tuple(extra_types)

    @cached_property
    def of_types(self) -> dict[str, Path]:
        """The build folder of each of a build-type list's other types that this command builds."""
        return {t: build_type_folder(self.primary, t) for t in self._extra_types}

    @cached_property
    def manifests(self) -> dict[Path, InstallManifests]:
        """This command's reading of each build folder's install manifests, shared with its driver."""
        folders = [self.primary, *self.of_types.values(), *map(Path, build_type_dirs(self.primary))]
        return {folder: InstallManifests(folder) for folder in dict.fromkeys(folders)}

    def installed_names(self, prefix: Path, folders: Iterable[Path] | None = None) -> list[str]:
        """What the last install from each build folder (``folders``, else every one) wrote into ``prefix``."""
        chosen = self.manifests if folders is None else [folder for folder in folders if folder in self.manifests]
        names = [name for folder in chosen for name in self.manifests[folder].installed_names(prefix)]
        return list(dict.fromkeys(names)) if len(chosen) > 1 else names

    def installed(self) -> list[Path]:
        """What this command's install (into the package tree, or the staging tree) wrote: of every
        build type's folder (a type the build did not build has had its files withdrawn)."""
        return self._union(manifests.installed(self.install_root) for manifests in self.manifests.values())

    def every_installed_file(self) -> list[Path]:
        """What any install from these build folders wrote (the source tree's and staging's)."""
        return self._union(manifests.installed() for manifests in self.manifests.values())

    def _union(self, lists: Iterator[list[Path]]) -> list[Path]:
        found = [path for paths in lists for path in paths]
        return list(dict.fromkeys(found)) if len(self.manifests) > 1 else found
