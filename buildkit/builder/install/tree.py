"""How a tree rule's files are compared and copied: the part of the install step that
buildkit does itself (:mod:`buildkit.builder.install.step`).

A tree rule is an ``install(FILES|DIRECTORY)`` of plain source paths.  Its sources are
scanned with one ``lstat`` each, its installed files are mapped back to their sources by
the rule's roots, and a changed file is copied through a temporary file renamed into
place, keeping the installed copy's mode and dated when it was copied, like what CMake
installs under ``CMAKE_INSTALL_ALWAYS`` (:mod:`buildkit.builder.install.times` says why
never like its source).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildkit.builder.install import summary as install_summary
from buildkit.builder.install.record import Fingerprint, InstallRecord, fingerprint, source_of
from buildkit.builder.install.script import InstallUnit
from buildkit.builder.install.summary import scan_files

if TYPE_CHECKING:
    from buildkit.builder.install.summary import ScanKey


def differs(source: str, installed: str) -> bool:
    """Whether the installed copy's bytes differ from the source's (or it cannot be read).
    Not filecmp: it caches answers by size and mtime, the very stat this compare distrusts."""
    try:
        with open(source, "rb") as a, open(installed, "rb") as b:
            while True:
                chunk = a.read(1 << 20)
                if chunk != b.read(1 << 20):
                    return True
                if not chunk:
                    return False
    except OSError:
        return True


def maybe_changed(previous: Fingerprint | None, now: Fingerprint, record: InstallRecord) -> bool:
    return previous is None or previous[1] != now or record.is_racy(now)


def scan_spec(unit: InstallUnit) -> tuple[list[str], bool]:
    """A tree rule's source paths as scanned, and whether they are folders (install(DIRECTORY))."""
    return [os.path.normpath(source) for source in unit.sources], unit.tree_type == "DIRECTORY"


def scan_key(unit: InstallUnit) -> ScanKey:
    return install_summary.scan_key(*scan_spec(unit))


def scan(unit: InstallUnit) -> dict[str, Fingerprint]:
    """Every file a tree rule could install, with its fingerprint: its FILES, or everything
    below its folders."""
    found: dict[str, Fingerprint] = {}
    sources, folders = scan_spec(unit)
    for path in sources:
        if folders and os.path.isdir(path):
            found.update(scan_files(path))
        elif (recorded := fingerprint(path)) is not None:
            found[path] = recorded
    return found


def needs_look(installed: str, record: InstallRecord, touched: set[str]) -> bool:
    """Whether ``installed`` must be looked at: its folder changed or was never recorded."""
    folder = os.path.dirname(installed)
    return folder in touched or folder not in record.folders


def folders_within(folders: set[str], roots: list[list[str]] | None, prefix: str) -> set[str]:
    """Those of ``folders`` (absolute) that may hold files of a tree rule with ``roots``
    ([installed folder or file under the prefix, source]): a root folder, a folder below
    one, or a folder above one.  All of them when the roots are not known."""
    if roots is None:
        return set(folders)
    places = [f"{prefix}/{installed}" if installed else prefix for installed, _ in roots]
    return {folder for folder in folders
            if any(folder == place or folder.startswith(place + "/") or place.startswith(folder + "/")
                   for place in places)}


def missing_outputs(outputs: list[str], record: InstallRecord, touched: set[str]) -> list[str]:
    return [path for path in outputs if needs_look(path, record, touched) and not os.path.lexists(path)]


def members_of(unit: InstallUnit, installed: list[str], prefix: Path,
             scan: dict[str, Fingerprint]) -> tuple[dict[str, list[Any]] | None, list[list[str]] | None]:
    """Installed file -> [its source, the source's fingerprint], and the rule's roots; None
    when an installed file maps to no plain source file (then the rule is compared as a
    whole, like any other)."""
    destination = unit.destination
    assert destination is not None, "a tree unit has a destination"
    members: dict[str, list[Any]] = {}
    roots: list[list[str]] = []
    for source in unit.sources:
        if unit.tree_type == "FILE":
            roots.append([os.path.join(destination, os.path.basename(source)), os.path.normpath(source)])
        else:
            base = destination if source.endswith("/") else os.path.join(destination, os.path.basename(source))
            roots.append([base.rstrip("/"), os.path.normpath(source)])
    top = f"{prefix}/"
    for path in installed:
        if not path.startswith(top):
            return None, None
        relative = path[len(top):]
        try:
            source = source_of(relative, roots)
        except ValueError:
            return None, None
        recorded = scan.get(source) or fingerprint(source)
        if recorded is None or recorded[3] != "file":
            return None, None
        members[path] = [source, recorded]
    return members, roots


def copy_file(source: str, installed: str) -> Fingerprint:
    """Copy ``source`` over ``installed`` through a temp file renamed into place, keeping the
    installed copy's mode, dated by the copy; the source's fingerprint read before the copy,
    so an edit during it shows next time."""
    before = fingerprint(source)
    if before is None:  # the copy below would fail the same way (a source that is gone)
        raise FileNotFoundError(f"install source missing: {source}")
    target = Path(installed)
    mode = os.stat(installed).st_mode & 0o7777 if os.path.exists(installed) else os.stat(source).st_mode & 0o777
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        shutil.copyfile(source, temporary)
        os.chmod(temporary, mode)
        os.replace(temporary, installed)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return before
