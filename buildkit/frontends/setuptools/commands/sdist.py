"""``sdist``: every source the CMake build needs, none of its outputs, reproducibly.

setuptools' own file list knows Python modules, package data and extension
sources, but not ``CMakeLists.txt``, ``cmake/``, headers, templates or YAML, and
it picks up what a build installed into the package tree (package data globs
like ``lib/*.so`` match them).  :meth:`Sdist.make_distribution` is the seam: the
list is final there, ``SOURCES.txt`` is not yet copied, and no archive exists.
The list becomes setuptools' files plus everything git tracks (or, outside git,
the whole tree), minus build outputs.  With ``SOURCE_DATE_EPOCH`` the tarball is
rewritten with fixed timestamps, owners and modes and a gzip header without a
time or name, so two sdists of the same sources are byte-identical.
"""

from __future__ import annotations

import copy
import gzip
import os
import stat
import tarfile
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, cast

from setuptools.command.sdist import sdist as _sdist

from buildkit._util.fileutil import PROTECTED_DIR_NAMES, PROTECTED_FILE_NAMES
from buildkit._util.git import tracked_files
from buildkit.frontends.setuptools.distribution import project_of
from buildkit.package.links import LinkGuard
from buildkit.package.version import is_generated_version_file
from buildkit.project import Project

if TYPE_CHECKING:
    from setuptools.command.build import build
    from setuptools.command.egg_info import egg_info as egg_info_command

PYTHON_OUTPUT_GLOBS = ("*.pyc", "*.pyo")
OUTPUT_GLOBS = ("*.so", "*.so.*", "*.dylib", "*.pyd", "*.o", "*.obj", "*.a", *PYTHON_OUTPUT_GLOBS,
                "compile_commands.json")
SKIPPED_DIR_NAMES = PROTECTED_DIR_NAMES | {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


class OutputFilter:
    """Which root-relative posix paths are build outputs (or never belong in an sdist)."""

    def __init__(self, project: Project, extra_dirs: Iterable[Path] = (), egg_info_dir: str | None = None):
        self.root = project.settings.root
        dirs = [project.build_dir, self.root / "dist", *extra_dirs]
        self.dirs = {rel for rel in map(self._relative, dirs) if rel and rel != "."}
        self.installed = {rel for rel in map(self._relative, project.every_installed_file) if rel}
        version_py = project.settings.package_dir / project.settings.version_module
        if project.settings.version_module and is_generated_version_file(version_py):
            self.installed.add(self._relative(version_py) or "")
        self.egg_info = self._relative(Path(egg_info_dir).absolute()) if egg_info_dir else None
        # Without a CMake part nothing is compiled: a library in the tree is a source (a prebuilt one
        # shipped as package data), not an output.
        self.output_globs = OUTPUT_GLOBS if project.settings.cmake else PYTHON_OUTPUT_GLOBS

    def _relative(self, path: Path) -> str | None:
        absolute = Path(os.path.abspath(path if path.is_absolute() else self.root / path))
        return absolute.relative_to(self.root).as_posix() if absolute.is_relative_to(self.root) else None

    def excludes_folder(self, rel: str) -> bool:
        name = PurePosixPath(rel).name
        # Stale egg-info folders go; the one setuptools is writing for this sdist stays.
        return rel in self.dirs or name in SKIPPED_DIR_NAMES or (name.endswith(".egg-info") and rel != self.egg_info)

    def excludes(self, rel: str) -> bool:
        path = PurePosixPath(rel)
        if rel in self.installed or path.name in PROTECTED_FILE_NAMES:
            return True
        if any(fnmatchcase(path.name, pattern) for pattern in self.output_globs):
            return True
        return any(self.excludes_folder(p.as_posix()) for p in path.parents if p.parts)


def _walk(root: Path, keep: OutputFilter, links: LinkGuard) -> list[str]:
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        here = Path(current)
        # Environments are recognised by content, whatever their folder is called.
        dirs[:] = sorted(d for d in dirs if not (here / d / "pyvenv.cfg").exists()
                         and not keep.excludes_folder((here / d).relative_to(root).as_posix()))
        for linked in (d for d in dirs if (here / d).is_symlink()):  # not entered, but never one out of the project
            links.check_link(here / linked)
        found += [(here / f).relative_to(root).as_posix() for f in files]
    return found


def shipped_files(root: Path, names: Iterable[str], links: LinkGuard) -> list[str]:
    """The names (relative to ``root``) that are files, as the sdist ships them: a link's
    content (see docs/wheel-contents.md), so each link must pass ``links``; a dangling one
    stops the build instead of vanishing from the list.  One ``lstat`` per name."""
    found = []
    for name in names:
        path = os.path.join(root, name)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue  # tracked, but deleted from the work tree: not a source any more
        if stat.S_ISLNK(mode):
            links.check_link(path)
        if stat.S_ISREG(mode) or (stat.S_ISLNK(mode) and os.path.isfile(path)):
            found.append(name)
    return found


def source_files(root: Path, keep: OutputFilter, links: LinkGuard) -> list[str]:
    """Files git tracks (those that exist), else every file in the tree; outputs removed.

    An unpacked sdist inside someone's checkout has nothing tracked under it: that
    is walked like a tree outside git.
    """
    tracked = tracked_files(root)
    candidates = tracked if tracked else _walk(root, keep, links)
    return shipped_files(root, [f for f in candidates if not keep.excludes(f)], links)


def normalize_tarball(path: Path, epoch: int) -> None:
    """Rewrite a .tar.gz with fixed mtimes, owners and modes, and a gzip header without time or name.

    Entry order is kept: tarfile adds folders in sorted order, so it is already
    deterministic, and keeping it lets the rewrite stream instead of seeking.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tarfile.open(path, "r|gz") as source, open(tmp, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as zipped, \
                tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as target:
            for member in source:
                target.addfile(_normalized(member, epoch), source.extractfile(member) if member.isfile() else None)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _normalized(member: tarfile.TarInfo, epoch: int) -> tarfile.TarInfo:
    info = copy.copy(member)
    info.mtime = epoch
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
    info.pax_headers = {}  # drops sub-second mtimes and other per-machine extras
    return info


class Sdist(_sdist):
    """setuptools' sdist with CMake sources included and build outputs excluded."""

    def project(self) -> Project:
        return project_of(self.distribution)

    def make_distribution(self) -> None:
        project = self.project()
        # Known by construction: these names give setuptools' commands (or buildkit's subclasses).
        egg_info: str = cast("egg_info_command", self.get_finalized_command("egg_info")).egg_info
        # setuptools' build tree and a release tree left by `sdist --keep-temp` are outputs too.
        build_base = cast("build", self.get_finalized_command("build")).build_base
        extra = [Path(build_base), Path(self.distribution.get_fullname())]
        keep = OutputFilter(project, [p.absolute() for p in extra], egg_info)
        root = project.settings.root
        links = project.link_guard(root)
        ours = [os.path.relpath(root / rel) for rel in source_files(root, keep, links)]
        theirs = shipped_files(Path(os.curdir), [f for f in self.filelist.files
                                                 if not keep.excludes(_root_relative(root, f))], links)
        self.filelist.files = sorted(set(ours) | set(theirs))
        self._rewrite_sources_txt(Path(egg_info) / "SOURCES.txt")
        super().make_distribution()

    def _rewrite_sources_txt(self, path: Path) -> None:
        # An sdist build reads SOURCES.txt back as its file list (there is no git
        # there), so it must list what the archive really holds.
        if path.is_file():
            path.write_text("\n".join(Path(f).as_posix() for f in self.filelist.files), encoding="utf-8")

    def make_archive(self, base_name: Any, format: str, root_dir: Any = None, base_dir: Any = None,
                     owner: Any = None, group: Any = None) -> str:
        archive = super().make_archive(base_name, format, root_dir, base_dir, owner=owner, group=group)
        epoch = self.project().options.source_date_epoch
        if epoch is not None and format == "gztar":
            normalize_tarball(Path(archive), epoch)
        return archive


def _root_relative(root: Path, name: str) -> str:
    return Path(os.path.relpath(os.path.abspath(name), root)).as_posix()
