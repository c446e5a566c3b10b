"""What the last install into one prefix did: per install rule, its outputs and the state of its inputs.

The install step compares each input's size, nanosecond mtime and ctime with this
record instead of asking CMake, whose ``file(INSTALL)`` trusts times within a
second of each other.  ctime catches an edit whose mtime was put back (``os.utime``
cannot set ctime).  An input whose recorded mtime is not older than the record
file itself (git's racy-clean rule) may have changed again in the same clock tick
after it was read, so its content is compared instead.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildkit._util import marshal_file
from buildkit.builder.install import summary as install_summary
from buildkit.builder.install.summary import scan_files

# Marshal data, not JSON: a tree of 8,000 headers is read and written on every edit's
# install (10 ms and 15 ms as JSON, 2-3 ms each as marshal, measured).
HEADER = marshal_file.header("install record 4")

Fingerprint = list[Any]  # [size, mtime_ns, ctime_ns, kind], or for a folder [files, newest mtime, newest ctime, "tree"]


def fingerprint(path: str | Path) -> Fingerprint | None:
    """A file's (or a link's own) stat as compared between installs; None when missing."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return folder_fingerprint(Path(path))
    return install_summary.fingerprint_of(info)


def folder_fingerprint(folder: Path) -> Fingerprint:
    """A folder's file count and newest times: changes when any file below it is added,
    removed or edited (a rule's input that CMake reads as a whole)."""
    files = scan_files(folder)
    info = os.stat(folder)
    return [len(files), max([info.st_mtime_ns, *(f[1] for f in files.values())]),
            max([info.st_ctime_ns, *(f[2] for f in files.values())]), "tree"]


def folder_times(folders: Iterable[str]) -> dict[str, list[int]]:
    """The mtime and ctime of each folder that holds installed files: a file deleted from the
    install changes its folder's times, so the files need no stat of their own."""
    times: dict[str, list[int]] = {}
    for folder in folders:
        try:
            info = os.stat(folder)
        except OSError:
            continue
        times[folder] = [info.st_mtime_ns, info.st_ctime_ns]
    return times


class UnitRecord:
    """One install rule's record: its outputs (absolute), a CMake-run rule's inputs, and for
    a tree rule its members (installed file -> [source, the source's fingerprint when it was
    copied]), every file below its sources (``listing``) and its roots ([installed folder or
    file under the prefix, source]).  A tree read from disk stays as stored until something
    needs it whole: a no-op compares it as stored (:meth:`unchanged`)."""

    def __init__(self, outputs: list[str] | None = None, inputs: dict[str, Fingerprint | None] | None = None,
                 members: dict[str, list[Any]] | None = None, listing: list[str] | None = None,
                 roots: list[list[str]] | None = None, *, stored: dict[str, Any] | None = None, prefix: str = ""):
        self._outputs = outputs if outputs is not None else []
        self.inputs = inputs if inputs is not None else {}
        self._members, self._listing, self.roots = members, listing, roots
        self._stored, self._prefix = stored, prefix

    @property
    def is_tree(self) -> bool:
        return self._members is not None or self._stored is not None

    def _expand(self) -> None:
        stored, self._stored = self._stored, None
        if stored is None:
            return
        members: dict[str, list[Any]] = {}
        for relative, (size, mtime, ctime) in stored["members"].items():
            members[f"{self._prefix}/{relative}"] = [source_of(relative, self.roots or []),
                                                     [size, mtime, mtime + ctime, "file"]]
        self._members, self._outputs = members, list(members)
        self._listing = sorted({source for source, _ in members.values()} | set(stored.get("others", ())))

    @property
    def members(self) -> dict[str, list[Any]] | None:
        self._expand()
        return self._members

    @members.setter
    def members(self, value: dict[str, list[Any]] | None) -> None:
        self._expand()
        self._members = value

    @property
    def listing(self) -> list[str] | None:
        self._expand()
        return self._listing

    @listing.setter
    def listing(self, value: list[str] | None) -> None:
        self._expand()
        self._listing = value

    @property
    def outputs(self) -> list[str]:
        self._expand()
        return self._outputs

    def unchanged(self, scan: dict[str, Fingerprint], racy_from_ns: int) -> bool:
        """Whether a tree rule read from disk has the same files with the same fingerprints as
        ``scan``, none of them recorded at or after ``racy_from_ns``; False when unsure."""
        return self.edits(scan, racy_from_ns) == ([], [])

    def edits(self, scan: dict[str, Fingerprint], racy_from_ns: int,
              look_in: Iterable[str] = ()) -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
        """For a tree rule still as read from disk, whose files are the same ones as ``scan``'s
        (none added, removed or turned into a link): its members whose source's fingerprint
        changed or whose installed copy in one of the folders ``look_in`` is gone, and those
        recorded at or after ``racy_from_ns`` (their content decides), as (source, installed
        file) pairs.  None otherwise: the whole record then decides.  Thousands of members
        are compared as stored, without expanding them."""
        stored = self._stored
        if stored is None:
            return None
        members, others, roots = stored["members"], stored.get("others", ()), self.roots or []
        if len(scan) != len(members) + len(others) or any(path not in scan for path in others):
            return None
        top = len(self._prefix) + 1
        folders = {folder[top:] for folder in look_in if folder.startswith(self._prefix + "/")}
        if self._prefix in look_in:
            folders.add("")
        changed, racy = [], []
        for relative, (size, mtime, ctime) in members.items():
            source = source_of(relative, roots)
            now = scan.get(source)
            if now is None or now[3] != "file":
                return None
            installed = f"{self._prefix}/{relative}"
            if now != [size, mtime, mtime + ctime, "file"] or (
                    folders and relative.rpartition("/")[0] in folders and not os.path.lexists(installed)):
                changed.append((source, installed))
            elif mtime >= racy_from_ns:
                racy.append((source, installed))
        return changed, racy

    def with_inputs(self, inputs: dict[str, Fingerprint | None]) -> UnitRecord:
        """This rule's record for the next install, with ``inputs``; a tree still as stored stays so."""
        if self._stored is None:
            return UnitRecord(self.outputs, inputs, self.members, self.listing, self.roots)
        stored = {**self._stored, "members": dict(self._stored["members"])}
        return UnitRecord(None, inputs, roots=self.roots, stored=stored, prefix=self._prefix)

    def set_member(self, installed: str, source: str, fingerprint: Fingerprint) -> None:
        """``installed`` was copied from ``source``, which had ``fingerprint`` then."""
        if self._stored is not None and fingerprint is not None and fingerprint[3] == "file":
            size, mtime, ctime, _ = fingerprint
            self._stored["members"][installed[len(self._prefix) + 1:]] = [size, mtime, ctime - mtime]
            return
        self._expand()
        if self._members is not None:
            self._members[installed] = [source, fingerprint]

    def to_data(self, prefix: str) -> dict[str, Any]:
        data: dict[str, Any] = {"inputs": self.inputs}
        if self._stored is not None:
            return {**data, **self._stored, "roots": self.roots}
        if self.members is None or self.roots is None:
            return {**data, "outputs": self.outputs}
        # A tree of thousands of files is read on every no-op build: each member is stored as
        # its path under the prefix and its source's times, the source path following from roots.
        top = len(prefix) + 1
        sources = {source for source, _ in self.members.values()}
        return {**data, "roots": self.roots,
                "members": {path[top:]: [fp[0], fp[1], fp[2] - fp[1]] for path, (_, fp) in self.members.items()},
                "others": [path for path in self.listing or () if path not in sources]}

    @classmethod
    def from_data(cls, data: dict[str, Any], prefix: str) -> UnitRecord:
        inputs = dict(data.get("inputs", {}))
        if "members" not in data:
            return cls(list(data.get("outputs", [])), inputs)
        stored = {"members": data["members"], "others": list(data.get("others", ()))}
        return cls(None, inputs, roots=[list(root) for root in data["roots"]], stored=stored, prefix=prefix)


def source_of(relative: str, roots: list[list[str]]) -> str:
    """The source of an installed file (its path under the prefix), by the rule's roots."""
    for installed, source in roots:
        if relative == installed:
            return source
        if not installed or relative.startswith(installed + "/"):
            return source + relative[len(installed):] if installed else f"{source}/{relative}"
    raise ValueError(f"{relative} is under no root of its rule")


@dataclass
class InstallRecord:
    prefix: str
    config: str
    units: dict[str, UnitRecord] = field(default_factory=dict)
    folders: dict[str, list[int]] = field(default_factory=dict)  # installed folders' times after the install
    written_ns: int = 0  # the record file's mtime: inputs dated at or after it are racy
    # The files the rules CMake runs installed, as they were right after: another build
    # folder installing into the same tree (another interpreter's develop) replaces them.
    installed: dict[str, Fingerprint | None] = field(default_factory=dict)  # None: an output that was missing

    def replaced_outputs(self, outputs: Iterable[str]) -> list[str]:
        """Those of ``outputs`` that are no longer the files this record's install wrote."""
        return [path for path in outputs if path in self.installed and fingerprint(path) != self.installed[path]]

    def outputs(self) -> set[str]:
        return {path for unit in self.units.values() for path in unit.outputs}

    def is_racy(self, recorded: Fingerprint) -> bool:
        mtime_ns: int = recorded[1]
        return mtime_ns >= self.written_ns - install_summary.RACY_SLACK_NS

    def newest_moved(self, now: dict[str, list[int]]) -> int:
        """The newest mtime, in ``now``, of a folder whose times are not the recorded ones (0: none)."""
        return max((times[0] for folder, times in now.items() if self.folders.get(folder) != times), default=0)

    def touched_folders(self, now: dict[str, list[int]] | None = None) -> set[str]:
        """Installed folders whose content may have changed since the install (an installed
        file deleted or replaced by hand): their files are checked one by one.  ``now``:
        the folders' times, when already read."""
        now = folder_times(self.folders) if now is None else now
        return {folder for folder, times in self.folders.items()
                if now.get(folder) != times or self.is_racy([0, times[0]])}


def verified_path(path: Path) -> Path:
    """A stamp touched after a no-op found every racy entry clean: from then on they are
    older than the reference and compared by their stat again (git rewrites its index)."""
    return path.with_suffix(".verified")


def load(path: Path, prefix: Path, config: str) -> InstallRecord | None:
    """The record of the last finished install into ``prefix`` with ``config``; None if there is none."""
    data = marshal_file.read(str(path), HEADER)
    if data is None or data.get("prefix") != str(prefix) or data.get("config") != config:
        return None
    try:
        written = path.stat().st_mtime_ns
        verified = verified_path(path)
        written = max(written, verified.stat().st_mtime_ns if verified.exists() else 0)
        units = {key: UnitRecord.from_data(unit, str(prefix)) for key, unit in data["units"].items()}
        folders = dict(data["folders"])
        installed: dict[str, Fingerprint | None] = {str(path): list(stamp)
                                                    for path, stamp in data.get("installed", {}).items()}
    except (OSError, KeyError, AttributeError, TypeError, ValueError):
        return None
    return InstallRecord(str(prefix), config, units, folders, written, installed)


def save(path: Path, record: InstallRecord) -> None:
    verified_path(path).unlink(missing_ok=True)
    data = {"prefix": record.prefix, "config": record.config, "folders": record.folders,
            "installed": record.installed,
            "units": {key: unit.to_data(record.prefix) for key, unit in sorted(record.units.items())}}
    marshal_file.write(str(path), HEADER, data)
