"""What the last install into one prefix did: per install rule, its outputs and the state of its inputs.

The install step compares each input's size, nanosecond mtime and ctime with this
record instead of asking CMake, whose ``file(INSTALL)`` trusts times within a
second of each other.  ctime catches an edit whose mtime was put back (``os.utime``
cannot set ctime).  An input whose recorded mtime is not older than the record
file itself (git's racy-clean rule) may have changed again in the same clock tick
after it was read, so its content is compared instead.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from buildkit._util.fileutil import read_json, write_atomic

FORMAT = 2
# Kernel file times come from a coarse clock (up to 10 ms per tick at HZ=100): an input
# read within a tick of the record being written is compared by content.
RACY_SLACK_NS = 20_000_000

Fingerprint = list  # [size, mtime_ns, ctime_ns, kind], or for a folder [files, newest mtime, newest ctime, "tree"]


def fingerprint(path: str | Path) -> Fingerprint | None:
    """A file's (or a link's own) stat as compared between installs; None when missing."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return folder_fingerprint(Path(path))
    kind = "link" if stat.S_ISLNK(info.st_mode) else "file"
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, kind]


def folder_fingerprint(folder: Path) -> Fingerprint:
    """A folder's file count and newest times: changes when any file below it is added,
    removed or edited (a rule's input that CMake reads as a whole)."""
    count, newest_m, newest_c = 0, 0, 0
    for entry in walk_files(folder):
        info = os.lstat(entry)
        count += 1
        newest_m, newest_c = max(newest_m, info.st_mtime_ns), max(newest_c, info.st_ctime_ns)
    info = os.stat(folder)
    return [count, max(newest_m, info.st_mtime_ns), max(newest_c, info.st_ctime_ns), "tree"]


def walk_files(folder: Path) -> list[str]:
    """Every file and link below ``folder`` (links not followed), sorted."""
    found: list[str] = []
    pending = [str(folder)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    found.append(entry.path)
    return sorted(found)


@dataclass
class UnitRecord:
    outputs: list[str] = field(default_factory=list)  # what the rule installed, absolute
    inputs: dict[str, Fingerprint | None] = field(default_factory=dict)  # a CMake-run rule's inputs
    # A tree rule: installed file -> [source, fingerprint of the source when it was copied].
    members: dict[str, list] | None = None
    listing: list[str] | None = None  # a tree rule: every file below its sources, members or not

    def to_json(self) -> dict:
        data: dict = {"outputs": self.outputs, "inputs": self.inputs}
        if self.members is not None:
            data.update(members=self.members, listing=self.listing)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "UnitRecord":
        return cls(list(data.get("outputs", [])), dict(data.get("inputs", {})), data.get("members"),
                   data.get("listing"))


@dataclass
class InstallRecord:
    prefix: str
    config: str
    units: dict[str, UnitRecord] = field(default_factory=dict)
    written_ns: int = 0  # the record file's mtime: inputs dated at or after it are racy

    def outputs(self) -> set[str]:
        return {path for unit in self.units.values() for path in unit.outputs}

    def is_racy(self, recorded: Fingerprint) -> bool:
        return recorded[1] >= self.written_ns - RACY_SLACK_NS


def load(path: Path, prefix: Path, config: str) -> InstallRecord | None:
    """The record of the last finished install into ``prefix`` with ``config``; None if there is none."""
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    if data.get("prefix") != str(prefix) or data.get("config") != config:
        return None
    try:
        written = path.stat().st_mtime_ns
        units = {key: UnitRecord.from_json(unit) for key, unit in data["units"].items()}
    except (OSError, KeyError, AttributeError, TypeError):
        return None
    return InstallRecord(str(prefix), config, units, written)


def save(path: Path, record: InstallRecord) -> None:
    data = {"format": FORMAT, "prefix": record.prefix, "config": record.config,
            "units": {key: unit.to_json() for key, unit in sorted(record.units.items())}}
    # Compact: a tree of 8,000 headers is read back on every no-op build.
    write_atomic(path, json.dumps(data, separators=(",", ":")).encode("utf-8"))
