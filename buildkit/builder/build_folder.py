"""Which folder buildkit may use as a build folder, and the marker that says it owns one.

``build-dir`` accepts any path, and ``clean`` deletes the build folder: with
``build-dir = "csrc"`` that once meant the project's sources.  So a folder becomes a
build folder only when buildkit claims it, and the claim writes a marker
(``<build>/.buildkit/build-folder``) that ``clean`` requires before it removes the
folder as a whole.

A claim is refused, before anything is written, for
- the project root, or a folder holding it;
- a folder that is, holds or lies inside one of the project's Python package folders
  (what is there ships in the wheel), or the CMake source folder when that is not the root;
- a path that exists but is not a folder (a plain file, a symlink loop);
- an existing folder that is not empty and carries no marker: buildkit did not make
  its files (sources, a package, someone else's build).  A build folder of an earlier
  buildkit, recognised by its state (``.buildkit/`` beside a ``CMakeCache.txt``) and
  holding no file git tracks, is adopted: it gets the marker.

A later claim costs a ``stat`` of the marker and ``build_state.clear_obstacles``'s few
dozen ``lstat`` calls; the no-op develop path never claims (its record exists only after
a claimed build).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from buildkit._util import console, git
from buildkit.builder.build_lock import DEFAULT_TIMEOUT_S, BuildFolderLock, lock_build_folder
from buildkit.builder.build_state import (
    BUILDKIT_ENTRIES,
    CMAKE_CACHE,
    MARKER,
    STATE_FOLDER,
    clear_obstacles,
    state_path,
)
from buildkit.errors import BuildkitError

_MARKER_TEXT = ("This folder is a build folder of buildkit; `buildkit clean` removes it whole.\n"
                "Delete this file and buildkit will neither build here nor remove the folder.\n")


def marker_path(build_dir: Path) -> Path:
    return Path(state_path(build_dir, MARKER))


def carries_marker(build_dir: Path) -> bool:
    return marker_path(build_dir).is_file()


def is_earlier_build_folder(build_dir: Path, entries: list[str]) -> bool:
    """A build folder an earlier buildkit made: its state folder beside CMake's cache, or
    nothing but the folders and files buildkit makes there (an egg_info run before a build)."""
    return (build_dir / STATE_FOLDER).is_dir() and ((build_dir / CMAKE_CACHE).is_file()
                                                     or set(entries) <= BUILDKIT_ENTRIES)


class BuildFolderRefused(BuildkitError):
    """The configured build folder is not one buildkit may build in or remove; ``reason``
    says what it is instead."""

    def __init__(self, build_dir: Path, reason: str, hint: str = ""):
        super().__init__(
            f"build-dir {build_dir} is {reason}. buildkit writes its build there, and `buildkit clean` "
            "removes it.",
            hint or "Set [tool.buildkit] build-dir to a folder of its own, such as \"build\" (the default), "
                    "that does not exist yet or that buildkit made.")
        self.reason = reason


def layout_refusal(build_dir: Path, root: Path, protected: Iterable[Path]) -> str | None:
    """Why ``build_dir`` can never be a build folder, from paths alone; None when it may be."""
    if build_dir == root or root.is_relative_to(build_dir):
        return "the project root" if build_dir == root else f"a folder holding the project root {root}"
    for folder in protected:
        if folder == root:
            continue  # a top-level module's package root: the root check above covers it
        if build_dir == folder or folder.is_relative_to(build_dir):
            return f"{'' if build_dir == folder else 'a folder holding '}the project folder {folder}"
        if build_dir.is_relative_to(folder):
            return f"inside the project folder {folder}, whose files ship in the wheel"
    return None


def claim_build_folder(build_dir: Path, root: Path, protected: Iterable[Path], *, write_marker: bool = True) -> None:
    """Make ``build_dir`` a build folder of buildkit's, or refuse with the reason (see the module).
    ``write_marker=False`` only checks (a dry run writes nothing)."""
    root = root.resolve()
    reason = layout_refusal(build_dir, root, protected)
    if reason:  # a marker never makes a project folder a build folder
        raise BuildFolderRefused(build_dir, reason)
    if carries_marker(build_dir):
        if write_marker:
            _clear_obstacles(build_dir)
        return
    if os.path.lexists(build_dir) and not build_dir.is_dir():
        raise BuildFolderRefused(build_dir, "not a folder (a file, or a link that leads nowhere)",
                                 f"Remove {build_dir} or set [tool.buildkit] build-dir to another folder.")
    if build_dir.is_dir():
        try:
            entries = sorted(entry.name for entry in os.scandir(build_dir))
        except OSError as error:
            raise BuildFolderRefused(build_dir, f"a folder that cannot be listed ({error.strerror})") from None
        if entries and not is_earlier_build_folder(build_dir, entries):
            shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
            raise BuildFolderRefused(build_dir, f"a folder buildkit did not make: it holds {shown}",
                                     "Set [tool.buildkit] build-dir to a folder of its own (the default is "
                                     f"\"build\"), or, if {build_dir} is a build folder you can lose, empty it first.")
        if entries and _holds_tracked_files(build_dir, root):
            raise BuildFolderRefused(build_dir, "a folder holding files git tracks")
    if not write_marker:
        return
    _clear_obstacles(build_dir)
    marker = marker_path(build_dir)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(_MARKER_TEXT, encoding="utf-8")
    if (earlier := enclosing_build_folder(build_dir, root)) is not None:
        console.warn(f"{earlier} is a build folder of an earlier buildkit, which built there for every "
                     f"interpreter; this one builds in {build_dir} (a folder per interpreter). The earlier "
                     "build is left as it is: `buildkit clean` removes it.")


def prepare_build_type_folder(build_dir: Path) -> None:
    """The folder of one of a build-type list's other types, inside a claimed build folder: what
    a claim clears away is cleared there too; it gets no marker of its own (it goes with the
    folder that holds it, whose claim, lock and `clean` cover it).  A file or a link where it or
    its parent, the `build-types` folder, belongs is removed and named (a link is never followed
    out of the build folder)."""
    for folder in (build_dir.parent, build_dir):
        if os.path.islink(folder) or (os.path.lexists(folder) and not folder.is_dir()):
            what = "a link" if os.path.islink(folder) else "no folder"
            os.unlink(folder)
            console.warn(f"removed {folder}: {what} stood where buildkit keeps a build type's build folder "
                         "(it is made again)")
    _clear_obstacles(build_dir)


def enclosing_build_folder(build_dir: Path, root: Path) -> Path | None:
    """A build folder holding ``build_dir`` inside the project: the one ``build/`` of a
    buildkit before build folders were per interpreter (``build/{soabi}``)."""
    for folder in build_dir.parents:
        if not folder.is_relative_to(root) or folder == root:
            return None
        if carries_marker(folder):
            return folder
    return None


def _clear_obstacles(build_dir: Path) -> None:
    for path, what in clear_obstacles(build_dir):
        console.warn(f"removed {path}: {what} stood where buildkit keeps a file of the build folder "
                     "(it is made again)")


def _holds_tracked_files(folder: Path, root: Path) -> bool:
    if not folder.is_relative_to(root):
        return False
    relative = folder.relative_to(root).as_posix()
    tracked = git.run_git(root, "ls-files", "--", relative)
    return bool(tracked)


def lock_own_build_folder(build_dir: Path, root: Path, protected: Iterable[Path],
                          timeout: float = DEFAULT_TIMEOUT_S) -> BuildFolderLock:
    """The build folder's lock, once the folder is claimed: how every command that builds
    takes it (the claim writes nothing when the folder already carries the marker)."""
    claim_build_folder(build_dir, root, protected)
    return lock_build_folder(build_dir, timeout)
