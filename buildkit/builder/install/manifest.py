"""The install manifests: which files an install into a prefix wrote.

``install_manifest.txt`` lists what the last install into any prefix wrote (as CMake's
own does); ``.buildkit/manifest-<prefix key>.txt`` keeps one per prefix, the package
tree's and a wheel's staging tree's.  One command reads the same manifest several times
(staging, package data, metadata, the install's own bookkeeping), 8,000 lines each, so
each version of a manifest is parsed, and made into Paths, once per command
(:class:`InstallManifests`, owned by the command, not by this module).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from buildkit.builder.build_state import INSTALL_MANIFEST, STATE_FOLDER, install_state_name, state_path


def prefix_key(prefix: Path) -> str:
    return hashlib.sha256(str(Path(prefix).absolute()).encode()).hexdigest()[:12]


def manifest_copy(build_dir: Path, prefix: Path) -> Path:
    """The manifest of the last install into ``prefix`` from ``build_dir``."""
    return Path(state_path(build_dir, install_state_name("manifest", prefix_key(prefix))))


class InstallManifests:
    """The install manifests of one build folder, read for one command: each version of a
    manifest is parsed, and made into Paths, once.  Its owner (the command's Project, or
    one install) drops it with the command, so no module keeps 8,000 Paths alive, and a
    later command (a second PEP 517 hook in one process) starts from the files again."""

    def __init__(self, build_dir: Path):
        self.build_dir = Path(build_dir)
        self._names: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
        self._paths: dict[str, tuple[list[str], tuple[Path, ...]]] = {}

    def names(self, path: Path) -> list[str]:
        """A manifest's paths as strings, parsed once per version of the file."""
        try:
            info = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return []
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)  # written by rename: a new inode each time
        cached = self._names.get(str(path))
        if cached is None or cached[0] != stamp:
            text = Path(path).read_text(encoding="utf-8")
            cached = self._names[str(path)] = (stamp, [line for line in text.splitlines() if line.strip()])
        return cached[1]

    def _paths_of(self, path: Path) -> list[Path]:
        """A manifest's paths as Paths, made once per version of the manifest: a wheel build
        asks for the same 8,000 several times, and a Path costs about 2 us to make."""
        names = self.names(path)
        made = self._paths.get(str(path))
        if made is None or made[0] is not names:
            made = self._paths[str(path)] = (names, tuple(map(Path, names)))
        return list(made[1])

    def installed(self, prefix: Path | None = None) -> list[Path]:
        """The files the last install into ``prefix`` wrote; without ``prefix``, the files of
        every prefix this build folder installed into (the package tree, a wheel's staging
        folder)."""
        if prefix is not None:
            return self._paths_of(manifest_copy(self.build_dir, prefix))
        state = self.build_dir / STATE_FOLDER
        found = dict.fromkeys(self._paths_of(self.build_dir / INSTALL_MANIFEST))
        for copy in sorted(state.glob("manifest-*.txt")) if state.is_dir() else ():
            found.update(dict.fromkeys(self._paths_of(copy)))
        return list(found)

    def installed_names(self, prefix: Path) -> list[str]:
        """The files the last install into ``prefix`` wrote, as strings: for the passes over
        every installed file that only compare names."""
        return list(self.names(manifest_copy(self.build_dir, prefix)))


def read_install_manifest(build_dir: Path, prefix: Path | None = None) -> list[Path]:
    """:meth:`InstallManifests.installed` for a caller that reads once."""
    return InstallManifests(build_dir).installed(prefix)
