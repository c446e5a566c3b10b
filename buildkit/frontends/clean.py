"""``clean``: remove build outputs, and with ``--all`` everything ``.gitignore`` lists.

Deleting is the one thing a build tool can do that a rebuild cannot undo, so every
candidate passes a guard first (:class:`Guard`).  It refuses anything tracked by
git, anything whose real location is outside the project root (a symlink that
points out is unlinked as a link, never followed), the active virtual environment
and any folder holding ``pyvenv.cfg``, ``conda-meta`` or its own ``.git``, VCS/IDE/
venv folders by name, dotenv files, and everything at or below a folder holding a
``.buildkit-keep`` marker.  Folders are removed file by file under the same guard,
so a protected file inside an ignored folder keeps that folder (and itself) alive.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from buildkit._util import console, git
from buildkit._util.fileutil import KEEP_MARKER, PROTECTED_DIR_NAMES, PROTECTED_FILE_NAMES
from buildkit.builder.build_folder import BuildFolderRefused, carries_marker, claim_build_folder
from buildkit.builder.build_lock import lock_build_folder
from buildkit.builder.build_state import build_type_dirs
from buildkit.builder.install.manifest import read_install_manifest
from buildkit.config.build_dir import every_interpreter_glob, is_templated, template_base
from buildkit.config.globs import check_glob, glob_match
from buildkit.config.settings import ProjectSettings
from buildkit.errors import BuildkitError, ConfigError
from buildkit.package.version import is_generated_version_file

EXTENSION_SUFFIXES = (".so", ".pyd")
WHEEL_STAGING_GLOB = ".buildkit-wheel-*"  # left behind only when a wheel build was killed
SETUPTOOLS_OUTPUTS = ("lib", "lib.*", "bdist.*", "temp.*", "scripts-*")  # build, bdist_*, build_ext, build_scripts


# ---------------------------------------------------------------- guard

class Guard:
    """Decides, path by path, whether a deletion is allowed."""

    def __init__(self, root: Path, tracked: Iterable[str] = ()):
        self.root = root.resolve()
        self.tracked = frozenset(tracked)
        prefixes = [Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                      os.environ.get("VIRTUAL_ENV"), os.environ.get("CONDA_PREFIX")) if p]
        # Both spellings: a symlink to the environment is protected as well.  Only
        # environments inside the project matter; the root confinement covers the rest.
        spellings = {form for p in prefixes for form in (Path(os.path.abspath(p)), p.resolve())}
        self.environments = frozenset(p for p in spellings if p.is_relative_to(self.root))

    def canonical(self, path: Path) -> Path | None:
        """``path`` with its folder resolved, when that lies inside the root (or is the root)."""
        absolute = Path(os.path.abspath(path))  # folds "..", so the name is a real entry name
        # The last component stays unresolved: a symlink is handled as the link itself.
        resolved = Path(os.path.realpath(absolute.parent)) / absolute.name
        return resolved if resolved.is_relative_to(self.root) else None

    def refusal(self, path: Path) -> str | None:
        """Why a top-level candidate must stay, or None; returns before looking at children."""
        resolved = self.canonical(path)
        if resolved is None:
            return "outside the project"
        if resolved == self.root:
            return "the project root itself"
        for folder in resolved.relative_to(self.root).parents:
            if folder != Path(".") and (reason := self._folder_refusal(self.root / folder)):
                return f"inside a folder that is {reason}"
        return self.entry_refusal(resolved)

    def entry_refusal(self, path: Path) -> str | None:
        """Checks for an entry whose parent already passed: links are never followed."""
        if path.relative_to(self.root).as_posix() in self.tracked:
            return "tracked by git"
        if path in self.environments:
            return "the active Python environment"
        if path.name in PROTECTED_FILE_NAMES:
            return "protected by name"
        if path.is_symlink() or not path.is_dir():
            return None
        return self._folder_refusal(path)

    def _folder_refusal(self, folder: Path) -> str | None:
        if folder.name in PROTECTED_DIR_NAMES:
            return "protected by name"
        if (folder / KEEP_MARKER).exists():
            return f"marked with {KEEP_MARKER}"
        if (folder / "pyvenv.cfg").exists() or (folder / "conda-meta").is_dir():
            return "a Python environment"
        if (folder / ".git").exists():
            return "another git repository"
        if folder in self.environments:
            return "the active Python environment"
        return None


# -------------------------------------------------------------- removal

@dataclass
class CleanReport:
    dry_run: bool
    removed: list[Path] = field(default_factory=list)  # top-level candidates (partly) removed
    kept: list[tuple[Path, str]] = field(default_factory=list)
    files: int = 0
    dirs: int = 0
    bytes: int = 0


class _Remover:
    def __init__(self, guard: Guard, dry_run: bool):
        self.guard = guard
        self.report = CleanReport(dry_run)
        self.gone: set[Path] = set()

    def candidate(self, path: Path) -> None:
        resolved = self.guard.canonical(path)
        if not os.path.lexists(path) or (resolved and not self.gone.isdisjoint((resolved, *resolved.parents))):
            return  # already (to be) removed as part of an earlier candidate
        reason = self.guard.refusal(path)
        if reason or resolved is None:  # refusal() is never None when canonical() is
            self.report.kept.append((path, reason or "outside the project"))
            return
        before = self.report.files + self.report.dirs
        self._remove(resolved)
        if self.report.files + self.report.dirs > before:
            self.report.removed.append(resolved)

    def _remove(self, path: Path) -> bool:
        """Remove ``path`` as far as the guard allows; True when it is gone entirely."""
        if self.guard.entry_refusal(path):
            return False
        if path.is_symlink() or not path.is_dir():
            size = path.lstat().st_size
            if not self.report.dry_run:
                path.unlink()
            self.report.files += 1
            self.report.bytes += size
            self.gone.add(path)
            return True
        # Every child is visited (no short-circuit) so unprotected ones still go.
        results = [self._remove(child) for child in sorted(path.iterdir())]
        if not all(results):
            return False
        self._rmdir(path)
        return True

    def _rmdir(self, path: Path) -> None:
        if not self.report.dry_run:
            path.rmdir()
        self.report.dirs += 1
        self.gone.add(path)

    def prune_empty_parents(self, path: Path, stop: Path) -> None:
        """Remove folders that ``path``'s removal left empty, up to (not including) ``stop``."""
        folder = self.guard.canonical(path)
        folder = folder.parent if folder is not None else None
        while folder is not None and folder != stop and folder.is_relative_to(stop):
            if not folder.is_dir() or folder in self.gone or self.guard.refusal(folder):
                return
            if any(child not in self.gone for child in folder.iterdir()):
                return
            self._rmdir(folder)
            self.report.removed.append(folder)
            folder = folder.parent


# ------------------------------------------------------------ candidates

def _files_below(folder: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    # os.walk does not follow symlinked folders, so nothing outside is reached.
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in PROTECTED_DIR_NAMES)
        yield from (Path(current) / name for name in sorted(files) if name.endswith(suffixes))


def build_outputs(settings: ProjectSettings) -> list[Path]:
    """What the default ``clean`` removes besides the installed files.  Without a CMake part
    (``cmake = false``) an extension module or ``compile_commands.json`` in the tree is none of
    buildkit's outputs (a prebuilt library shipped as package data): it stays."""
    root, package_dir = settings.root, settings.package_dir
    found = [settings.build_dir, *([root / "compile_commands.json"] if settings.cmake else []),
             *sorted(root.glob("*.egg-info"))]
    if package_dir.parent != root:
        found += sorted(package_dir.parent.glob("*.egg-info"))
    version_py = package_dir / settings.version_module
    if settings.version_module and is_generated_version_file(version_py):
        found.append(version_py)
    if package_dir.is_dir() and settings.cmake:
        found += _files_below(package_dir, EXTENSION_SUFFIXES)
    found += sorted((root / "dist").glob(WHEEL_STAGING_GLOB))
    # What setuptools' build commands leave in their default build_base, beside the build folders.
    found += [path for pattern in SETUPTOOLS_OUTPUTS for path in sorted((root / "build").glob(pattern))]
    return found


def ignored_paths(root: Path) -> list[Path]:
    """What ``.gitignore`` lists: git's own answer in a checkout, else a cautious reading."""
    entries = git.run_git(root, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory")
    if entries is not None:
        return [root / entry.rstrip("/") for entry in entries]
    return _ignored_without_git(root)


_Rule = tuple[str, bool, bool, bool]  # pattern, negated, folders only, anchored to the root


def _gitignore_rules(root: Path) -> list[_Rule]:
    """The root ``.gitignore``'s patterns, minus any that could reach too far.

    Without git there is no tracked-file list to fall back on, so patterns that
    match everything (``*``, ``**``), climb out (``..``) or use escapes are skipped.
    """
    try:
        lines = (root / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    rules: list[_Rule] = []
    for line in (raw.rstrip() for raw in lines):
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        body = line[1:] if negated else line
        anchored = "/" in body.rstrip("/")
        pattern = body.strip("/")
        try:
            segments = check_glob(pattern)
        except ConfigError:
            continue
        if "\\" in pattern or all(set(segment) <= {"*"} for segment in segments):
            continue
        rules.append((pattern, negated, body.endswith("/"), anchored))
    return rules


def _is_ignored(rules: Sequence[_Rule], rel: str, is_dir: bool) -> bool:
    verdict = False
    for pattern, negated, dir_only, anchored in rules:  # the last matching rule wins, as in git
        if dir_only and not is_dir:
            continue
        if glob_match(pattern, rel) if anchored else fnmatchcase(rel.rsplit("/", 1)[-1], pattern):
            verdict = not negated
    return verdict


def _ignored_without_git(root: Path) -> list[Path]:
    rules, found = _gitignore_rules(root), []
    pending = [root] if rules else []
    while pending:
        folder = pending.pop()
        for entry in sorted(folder.iterdir()):
            is_dir = entry.is_dir() and not entry.is_symlink()
            if _is_ignored(rules, entry.relative_to(root).as_posix(), is_dir):
                found.append(entry)  # like git, an ignored folder is not looked into
            elif is_dir and entry.name not in PROTECTED_DIR_NAMES:
                pending.append(entry)
    return sorted(found)


def clean_project(settings: ProjectSettings, *, include_ignored: bool = False, dry_run: bool = False,
                  install_manifest: Sequence[Path] | None = None, extra: Sequence[Path] = ()) -> CleanReport:
    """Remove the build outputs of the project (and with ``include_ignored`` what git ignores)."""
    root = settings.root
    tracked = git.tracked_files(root)
    if tracked is None and git.inside_checkout(root):
        raise BuildkitError(f"{root} is inside a git checkout, but `git ls-files` failed there.",
                            "buildkit will not delete files without knowing which ones git tracks; "
                            "check that git is installed and trusts this folder (git config safe.directory).")
    remover = _Remover(Guard(root, tracked or ()), dry_run)
    # This interpreter's build folder first, then the other interpreters' and an earlier
    # buildkit's one `build/` holding them, each with its own install manifest.
    folders = [settings.build_dir, *other_build_folders(settings)]
    refusals = {folder: build_folder_refusal(settings, folder, dry_run) for folder in folders}
    remover.report.kept += [(folder, refusal) for folder, refusal in refusals.items() if refusal]
    owned = [folder for folder, refusal in refusals.items() if refusal is None and folder.is_dir()]
    with ExitStack() as locks:
        # A build running in a folder finishes first (its lock), and none starts meanwhile; a
        # dry run writes nothing, the lock files included.
        for folder in owned if not dry_run else ():
            locks.enter_context(lock_build_folder(folder))
        # Only the install manifest of a folder buildkit made is trusted to name its files; a
        # build-type list's other types installed from folders of their own inside it.
        manifests = [(install_manifest if install_manifest is not None and folder == settings.build_dir
                      else read_install_manifest(folder)) for folder in owned]
        manifests += [read_install_manifest(Path(other)) for folder in owned for other in build_type_dirs(folder)]
        if install_manifest is not None and settings.build_dir not in owned:
            manifests.append(install_manifest)
        for listed in (path for manifest in manifests for path in manifest):
            path = listed if listed.is_absolute() else root / listed
            remover.candidate(path)
            # CMake installs into the package tree: folders it leaves empty there go too.
            remover.prune_empty_parents(path, settings.package_dir.resolve())
        outputs = [path for path in build_outputs(settings) if refusals[settings.build_dir] is None
                   or path != settings.build_dir]
        for path in [*outputs, *(folder for folder in owned if folder != settings.build_dir), *extra,
                     *(ignored_paths(root) if include_ignored else ())]:
            remover.candidate(path)
        # `build/` once its interpreters' folders are gone, if nothing else is left there.
        remover.prune_empty_parents(settings.build_dir, root.resolve())
    _print_report(remover.report, root)
    return remover.report


def other_build_folders(settings: ProjectSettings) -> list[Path]:
    """The build folders of other interpreters where ``build-dir`` has a placeholder, and the
    folder before its first placeholder when an earlier buildkit built there (its marker)."""
    template = settings.build_dir_template
    if not is_templated(template):
        return []
    found = [Path(path) for path in sorted(glob.glob(os.path.join(glob.escape(str(settings.root)),
                                                                  every_interpreter_glob(template))))]
    base = template_base(template)
    found += [settings.root / base] if base else []
    folders = dict.fromkeys(Path(os.path.realpath(path)) for path in found if carries_marker(path))
    return [folder for folder in folders if folder != settings.build_dir]


def build_folder_refusal(settings: ProjectSettings, build_dir: Path, dry_run: bool) -> str | None:
    """Why ``clean`` keeps ``build_dir`` (None: it may go): only a folder that buildkit
    claimed (its marker; an earlier buildkit's build folder is adopted) is removed."""
    if not os.path.lexists(build_dir):
        return None
    try:
        claim_build_folder(build_dir, settings.root, settings.project_folders, write_marker=not dry_run)
    except BuildFolderRefused as refused:
        return f"not a build folder buildkit made: {refused.reason}"
    return None


def _human(size: int) -> str:
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    power = min(len(units) - 1, max(0, (size.bit_length() - 1) // 10))
    return f"{size / 1024 ** power:.1f} {units[power]}" if power else f"{size} B"


def _print_report(report: CleanReport, root: Path) -> None:
    verb = "would remove" if report.dry_run else "removed"
    for path in report.removed:
        (console.info if report.dry_run else console.detail)(f"{verb} {path.relative_to(root.resolve())}")
    for path, reason in report.kept:
        console.detail(f"kept {path}: {reason}")
    console.info(f"{verb} {report.files} files and {report.dirs} folders, "
                 f"{_human(report.bytes)}{' would be' if report.dry_run else ''} freed")
