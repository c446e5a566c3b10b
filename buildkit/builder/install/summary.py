"""Whether the package tree is current, answerable before the install step's modules load.

The no-op ``buildkit develop`` (:mod:`buildkit.frontends.noop_develop`) asks this
while ninja runs, with nothing of buildkit imported but this module: the install
step (:mod:`buildkit.builder.install.step`) and its record cost ~35 ms of a 2-core
machine to import, a third of the no-op's budget.  After every install, and every
check that found the tree current, the install step writes a summary: the fingerprint
of each install script it read, of each input of the rules CMake runs, of every file
below the tree rules' sources, and the installed folders' times.  The tree is
current when all of them are unchanged, no install is half done, and none of the
recorded times is too recent to trust (git's racy-clean rule, as in the record).
Anything else is "not known": the install step's full check decides.
"""

from __future__ import annotations

import os
import stat

from buildkit._util import marshal_file

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op develop goes without
if TYPE_CHECKING:
    from typing import Any

    Stamp = list[Any]  # [size, mtime_ns, ctime_ns, kind], a list as marshal stores it
    ScanKey = tuple[*tuple[str, ...], bool]  # a tree rule's sources, then whether they are a folder

# Kernel file times come from a coarse clock (up to 10 ms per tick at HZ=100): an input
# read within a tick of the record being written is compared by content.
RACY_SLACK_NS = 20_000_000
HEADER = marshal_file.header("install summary 1")


def fingerprint_of(info: os.stat_result) -> Stamp:
    """[size, mtime_ns, ctime_ns, kind] of a file or link, as compared between installs."""
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, "link" if stat.S_ISLNK(info.st_mode) else "file"]


def scan_files(folder: str | os.PathLike[str]) -> dict[str, Stamp]:
    """Every file and link below ``folder`` (links not followed) with its fingerprint: one
    ``lstat`` per file, the least a check of thousands of installed headers can cost."""
    found: dict[str, Stamp] = {}
    pending = [os.fspath(folder)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    found[entry.path] = fingerprint_of(entry.stat(follow_symlinks=False))
    return found


def _lstat_fingerprint(path: str) -> Stamp | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return None if stat.S_ISDIR(info.st_mode) else fingerprint_of(info)


def _record_stamp(path: str) -> Stamp | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def save(path: str, *, record_path: str, verified_path: str, pending_path: str, scripts: list[str],
         inputs: dict[str, Stamp | None], trees: list[tuple[list[str], bool, dict[str, Stamp]]],
         folders: dict[str, list[int]]) -> bool:
    """Write the summary of a current tree.  ``trees``: each tree rule's source paths, whether
    they are folders to scan (``install(DIRECTORY)``), and what a scan of them finds now.
    False, and no summary, when an input is something this module does not compare, or
    when a recorded time is too recent for :func:`check` to trust: a summary it would
    turn down is not worth its 8,000 fingerprints' write."""
    script_stamps = {script: _lstat_fingerprint(script) for script in scripts}
    if any(fp is not None and fp[3] not in ("file", "link") for fp in inputs.values()):
        return False  # a folder read as a whole: the full check fingerprints it
    times = [times[0] for times in folders.values()]
    times += [fp[1] for _, _, expected in trees for fp in expected.values()]
    record = _record_stamp(record_path)
    newest = max(times, default=0)
    if record is None or newest >= max(record[1], _mtime(verified_path)) - RACY_SLACK_NS:
        return False  # check() could not trust it (a folder the install just wrote): the next check verifies
    summary = {"record": record, "record_path": record_path, "verified": verified_path,
               "pending": pending_path, "scripts": script_stamps, "inputs": inputs,
               "trees": [[sources, is_folder, expected] for sources, is_folder, expected in trees],
               "folders": folders, "newest": newest}
    marshal_file.write(path, HEADER, summary)
    return True


def forget(path: str) -> None:
    """Before the tree changes: a summary must never outlive the state it describes."""
    try:  # noqa: SIM105  contextlib.suppress would import contextlib on the lean no-op path
        os.unlink(path)
    except FileNotFoundError:
        pass


def _scan_tree(sources: list[str], is_folder: bool) -> dict[str, Stamp] | None:
    found: dict[str, Stamp] = {}
    for source in sources:
        if is_folder and os.path.isdir(source):
            found.update(scan_files(source))
        else:
            try:
                info = os.lstat(source)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                return None  # a folder named as a file: the full check fingerprints it whole
            found[source] = fingerprint_of(info)
    return found


def scan_key(sources: list[str], is_folder: bool) -> ScanKey:
    """How a tree rule's scan is named between the no-op's two stages."""
    return (*sources, is_folder)


def check(path: str) -> tuple[bool, dict[ScanKey, dict[str, Stamp]]]:
    """Whether the summary at ``path`` still describes the sources, the installed folders
    and the record (False when anything differs or is unsure: the full check then runs),
    and what the scan of each tree rule's sources found (by :func:`scan_key`), which the
    full check may take instead of scanning again."""
    summary = marshal_file.read(path, HEADER)
    scans: dict[ScanKey, dict[str, Stamp]] = {}
    if summary is None:
        return False, scans
    try:
        current = True
        for sources, is_folder, expected in summary["trees"]:
            found = _scan_tree(sources, is_folder)
            if found is not None:
                scans[scan_key(sources, is_folder)] = found
            current = current and found == expected
        return current and _unchanged_besides_trees(summary), scans
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OSError):
        return False, {}  # not a summary this version wrote


def _unchanged_besides_trees(summary: dict[str, Any]) -> bool:
    if os.path.exists(summary["pending"]) or _record_stamp(summary["record_path"]) != summary["record"]:
        return False
    written = max(summary["record"][1], _mtime(summary["verified"]))
    if summary["newest"] >= written - RACY_SLACK_NS:
        return False  # a time too close to the record's to trust: compared by content there
    if any(_lstat_fingerprint(script) != stamp for script, stamp in summary["scripts"].items()):
        return False
    if any(_lstat_fingerprint(source) != recorded for source, recorded in summary["inputs"].items()):
        return False
    for folder, times in summary["folders"].items():
        try:
            info = os.stat(folder)
        except OSError:
            return False
        if [info.st_mtime_ns, info.st_ctime_ns] != times:
            return False
    return True
