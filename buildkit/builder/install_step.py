"""The install step: CMake's install into the package tree, skipped when nothing changed.

A no-op rebuild must rewrite no installed file (IDEs, editable installs and
``import`` all watch those mtimes) and should not even start ``cmake --install``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from buildkit._util import console
from buildkit._util.fileutil import mtime_ns, write_atomic
from buildkit.builder import file_api
from buildkit.builder.build_output import StepResult, log_dir, run_step

STATE = ".buildkit"
INSTALL_MANIFEST = "install_manifest.txt"


def _prefix_key(prefix: Path) -> str:
    return hashlib.sha256(str(Path(prefix).absolute()).encode()).hexdigest()[:12]


def _read_lines(path: Path) -> list[Path]:
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [Path(line) for line in text.splitlines() if line.strip()]


def read_install_manifest(build_dir: Path, prefix: Path | None = None) -> list[Path]:
    """The files the last install into ``prefix`` wrote; without ``prefix``, the files of
    every prefix this build folder installed into (the package tree, a wheel's staging
    folder).  CMake's own ``install_manifest.txt`` only holds the last install."""
    state = Path(build_dir) / STATE
    if prefix is not None:
        return _read_lines(state / f"manifest-{_prefix_key(prefix)}.txt")
    found = dict.fromkeys(_read_lines(Path(build_dir) / INSTALL_MANIFEST))
    for copy in sorted(state.glob("manifest-*.txt")) if state.is_dir() else ():
        found.update(dict.fromkeys(_read_lines(copy)))
    return list(found)


class PackageTreeInstall:
    """``cmake --install`` of one build folder into one prefix, with a stamp of the last
    finished install there.  One build folder may install into several prefixes (the
    package tree for develop, a staging folder for a wheel): each keeps its own stamp
    and manifest, so switching between them never takes one for the other."""

    def __init__(self, build_dir: Path, install_prefix: Path, cmake: Path, build_type: str, *, verbose: bool = False):
        self.build_dir = Path(build_dir)
        self.install_prefix = Path(install_prefix)
        self.cmake = cmake
        self.build_type = build_type
        self.verbose = verbose
        key = _prefix_key(self.install_prefix)
        self.stamp = self.build_dir / STATE / f"installed-{key}"
        self.manifest_copy = self.build_dir / STATE / f"manifest-{key}.txt"

    def install(self, build: StepResult | None = None) -> StepResult | None:
        """Install; None when skipped because the build did nothing and the install is current."""
        if build is not None and build.no_work and self.is_current():
            return None
        last_install = mtime_ns(self.stamp)
        unfinished = last_install is None and (log_dir(self.build_dir) / "install.log").exists()
        previous = self.manifest()
        self.stamp.unlink(missing_ok=True)
        command = [str(self.cmake), "--install", str(self.build_dir), "--config", self.build_type,
                   "--prefix", str(self.install_prefix)]
        result = run_step("install", command, build_dir=self.build_dir, verbose=self.verbose,
                          env=install_environment(build, last_install, unfinished))
        written = self.build_dir / INSTALL_MANIFEST
        write_atomic(self.manifest_copy, written.read_bytes() if written.is_file() else b"")
        self.prune_stale(previous - self.manifest())
        self.stamp.touch()
        return result

    def manifest(self) -> set[str]:
        return {str(path) for path in read_install_manifest(self.build_dir, self.install_prefix)}

    def prune_stale(self, stale: set[str]) -> None:
        """Remove what an earlier install put into the package tree and this one no longer
        installs (a component switched off), so it can't ship in a wheel by accident."""
        prefix = self.install_prefix.resolve()
        for name in sorted(stale, reverse=True):
            path = Path(name)
            if not path.is_absolute() or not path.resolve().is_relative_to(prefix) or not os.path.lexists(path):
                continue
            path.unlink()
            console.detail(f"removed stale install output {path}")
            parent = path.parent
            while parent.resolve() != prefix and parent.is_dir() and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent

    def is_current(self) -> bool:
        """The last install completed after the last build and regeneration, and its files exist."""
        installed = mtime_ns(self.stamp)
        if installed is None:
            return False
        manifest = self.manifest()
        if not manifest:
            return False
        for name in (".ninja_log", "build.ninja", "cmake_install.cmake"):
            changed = mtime_ns(self.build_dir / name)
            if changed is not None and changed >= installed:
                return False
        # install(FILES/DIRECTORY) sources changed without any target being rebuilt.
        sources = file_api.installed_sources_cached(self.build_dir, self.build_dir / STATE / "install-sources.json")
        if file_api.newest_mtime_ns(sources) >= installed:
            return False
        return all(os.path.lexists(line) for line in manifest)


def install_environment(build: StepResult | None, last_install_ns: int | None,
                        unfinished: bool = False) -> dict[str, str] | None:
    """The environment for ``cmake --install``; None keeps the caller's.

    CMake's install skips a file whose time is within a second of the installed
    copy's (cmFileTime::DifferS), so right after a rebuild that quick it must copy
    everything.  So it must after an install that started and never finished: a
    file it was killed while writing is cut short, dated then, and looks up to date.
    """
    if unfinished:
        return {**os.environ, "CMAKE_INSTALL_ALWAYS": "1"}
    if build is None or build.steps == 0 or last_install_ns is None:
        return None
    if build.started - last_install_ns / 1e9 > 1.5:
        return None
    return {**os.environ, "CMAKE_INSTALL_ALWAYS": "1"}
