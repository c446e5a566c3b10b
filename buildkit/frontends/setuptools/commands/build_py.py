"""``build_py`` whose package-data listing is recorded, and reused while its inputs are unchanged.

setuptools lists a package's data files by expanding each ``package_data`` pattern in
the package folder, and does it again for every command that asks: egg_info's
manifest, ``editable_wheel``, and ``bdist_wheel`` (its purity check and its build).
buildkit names each installed file as a pattern of its own, so with PyTorch's 8,000
installed headers one listing costs about 0.3 s, and a no-op ``pip install -e .``
made three.  Each listing is kept in ``<build>/.buildkit/package-data.json``, one
entry per package and source folder, and reused while these inputs are unchanged
(they are everything setuptools' ``find_data_files`` and ``exclude_data_files`` read):

* setuptools' version (its implicit patterns, ``*.pyi`` and ``py.typed``, belong to it);
* the working folder and the package's source folder;
* the patterns: ``package_data`` for ``""`` and for the package, setuptools' implicit
  ones, and ``exclude_package_data`` for both;
* the files the manifest adds to the package (``include_package_data``);
* which patterns without a wildcard name a file now (one listing per folder they name);
* what each pattern with a wildcard in its file name only matches now (one folder read).

A pattern with a wildcard in a folder part, or ``**``, searches a whole tree, which is
the work the record saves: a package with one is listed by setuptools every time.
With ``VERBOSE=1`` each listing says whether it was reused or made, and why.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from glob import glob
from pathlib import Path
from typing import Any

import setuptools
import setuptools.command.build_py as setuptools_build_py
from setuptools.command.build_py import build_py as _build_py

from buildkit._util import console
from buildkit._util.fileutil import read_json, write_json
from buildkit.builder.build_state import PACKAGE_DATA_RECORD, state_path
from buildkit.frontends.setuptools.distribution import project_of

FORMAT = 1  # of an entry: a record another format wrote is listed anew
WILDCARD = re.compile(r"[*?[]")  # what glob treats as a pattern (glob.has_magic)


class BuildPy(_build_py):
    """setuptools' ``build_py``, with each package's data-file listing recorded."""

    def _get_pkg_data_files(self, package: str) -> tuple[str, str, str, list[str]]:
        src_dir = self.get_package_dir(package)
        inputs, not_recorded = listing_inputs(self, package, src_dir)
        if inputs is None:
            console.detail(f"listing package data of {package}: {not_recorded}")
            return self._setuptools_listing(package)
        record_path = Path(state_path(project_of(self.distribution).build_dir, PACKAGE_DATA_RECORD))
        record = read_json(record_path)
        entries = record.get("packages") if isinstance(record, dict) else None
        entries = entries if isinstance(entries, dict) else {}  # none yet, or unreadable: list anew
        key = f"{package} in {os.path.abspath(src_dir)}"
        recorded = entries.get(key)
        why = why_listed(recorded, inputs)
        if why is None:
            assert isinstance(recorded, dict), "why_listed() accepts only a recorded entry"
            files = list(recorded["files"])
            console.detail(f"package data of {package}: {len(files):,} file{'' if len(files) == 1 else 's'}, as "
                           "recorded (their patterns and the files those name are unchanged)")
            return package, src_dir, os.path.join(self.build_lib, *package.split(".")), files
        console.detail(f"listing package data of {package}: {why}")
        listed = self._setuptools_listing(package)
        kept = {name: entry for name, entry in entries.items()
                if isinstance(entry, dict) and Path(name.partition(" in ")[2]).is_dir()}
        kept[key] = {**inputs, "files": list(listed[3])}
        write_json(record_path, {"packages": kept})
        return listed

    def _setuptools_listing(self, package: str) -> tuple[str, str, str, list[str]]:
        """setuptools' own listing of the package's data files."""
        listed: tuple[str, str, str, list[str]] = super()._get_pkg_data_files(package)  # type: ignore[misc]  # private, not in the stubs
        return listed


def listing_inputs(command: _build_py, package: str, src_dir: str) -> tuple[dict[str, Any] | None, str]:
    """What the package's listing depends on, or None and why it cannot be recorded.

    The patterns are read as setuptools' ``_get_platform_patterns`` reads them: the
    implicit ones, then ``""``'s, then the package's, each joined to ``src_dir`` after
    ``convert_path``.  Plain patterns are joined as they are (``convert_path`` would return
    them unchanged), which saves a pathlib parse per pattern: 0.1 s for 8,000.
    """
    implicit = getattr(setuptools_build_py, "_IMPLICIT_DATA_FILES", None)
    if implicit is None:
        return None, (f"setuptools {setuptools.__version__} lists package data differently from the "
                      "versions this record was written for, so it is not recorded")
    if WILDCARD.search(src_dir):
        return None, f"its folder {src_dir!r} has glob wildcards in its name, which setuptools expands"
    spec, excluded = command.package_data, command.exclude_package_data
    declared = [*spec.get("", []), *spec.get(package, [])]
    literal: list[str] = []
    wildcard: list[str] = []
    converted = [*implicit, *declared]
    if os.sep == "/" and all_plain(declared):  # the common case: one string join per pattern
        prefix = os.path.join(src_dir, "")
        literal, converted = [prefix + pattern for pattern in declared], list(implicit)
    for pattern in converted:
        # distutils' convert_path, as setuptools' build_py imported it
        path = os.path.join(src_dir, setuptools_build_py.convert_path(pattern))  # type: ignore[attr-defined]  # not in its stubs
        (wildcard if WILDCARD.search(path) else literal).append(path)
    deep = next((p for p in wildcard if searches_folders(p)), None)
    if deep is not None:
        return None, f"the pattern {deep!r} searches folders, so its matches are not recorded"
    return {
        "format": FORMAT,
        "setuptools": setuptools.__version__,
        "folders": [os.getcwd(), src_dir],
        "patterns": _digest([*implicit, *declared]),
        "pattern_count": len(implicit) + len(declared),
        "excludes": _digest([*excluded.get("", []), *excluded.get(package, [])]),
        "manifest": _digest(list(command.manifest_files.get(package, []))),
        "missing": not_files(literal),
        "matches": {p: glob(p, recursive=True) for p in wildcard},
    }, ""


def all_plain(patterns: list[str]) -> bool:
    """Whether ``convert_path`` (pathlib) returns every pattern unchanged and none is a
    wildcard: no absolute path, empty or ``.`` part, trailing or double slash.  Substring
    tests over all patterns at once: a regex per pattern costs 50 ms for 8,000."""
    joined = "\0" + "\0".join(patterns) + "\0"
    return not any(part in joined for part in ("*", "?", "[", "//", "\0/", "/\0", "\0\0", "/./", "\0./",
                                                  "/.\0", "\0.\0"))


def not_files(paths: list[str]) -> list[str]:
    """The paths for which ``os.path.isfile`` is false, reading each folder once instead
    of a ``stat`` per path.  A name the folder's listing lacks (another case of it on a
    case-insensitive disk) is asked with ``os.path.isfile`` itself."""
    listings: dict[str, dict[str, os.DirEntry[str]]] = {}
    missing = []
    for path in paths:
        folder, _, name = path.rpartition(os.sep)
        entries = listings.get(folder)
        if entries is None:
            entries = listings[folder] = _listing(folder or os.curdir)
        entry = entries.get(name)
        if not (entry.is_file() if entry is not None else os.path.isfile(path)):
            missing.append(path)
    return missing


def _listing(folder: str) -> dict[str, os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return {entry.name: entry for entry in entries}
    except OSError:  # not a folder (any more): each path is asked on its own
        return {}


def searches_folders(pattern: str) -> bool:
    """Whether glob reads more than one folder to expand ``pattern``."""
    folder, name = os.path.split(pattern)
    return bool(WILDCARD.search(folder)) or name == "**"


def why_listed(recorded: Any, inputs: dict[str, Any]) -> str | None:
    """Why the recorded listing cannot be reused; None when it can."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("files"), list):
        return "no earlier listing is recorded"
    if recorded.get("format") != FORMAT:
        return "the recorded listing was written in another format"
    if recorded.get("setuptools") != inputs["setuptools"]:
        return f"setuptools changed ({recorded.get('setuptools')} -> {inputs['setuptools']})"
    if recorded.get("folders") != inputs["folders"]:
        return "the working or the package's source folder changed"
    if recorded.get("patterns") != inputs["patterns"]:
        before, now = recorded.get("pattern_count", 0), inputs["pattern_count"]
        return "its package_data patterns changed" + (f" ({before:,} -> {now:,})" if before != now else "")
    if recorded.get("excludes") != inputs["excludes"]:
        return "its exclude_package_data changed"
    if recorded.get("manifest") != inputs["manifest"]:
        return "the files the manifest adds to it changed"
    # Equal patterns give the same paths in the same order: the sets say it all.
    before, now = set(recorded.get("missing") or ()), set(inputs["missing"])
    if before != now:
        changed = sorted(before ^ now)
        return (f"{len(changed):,} named file{'' if len(changed) == 1 else 's'} appeared or disappeared "
                f"({changed[0]} {'appeared' if changed[0] in before else 'disappeared'})")
    changed_pattern = next((p for p, found in inputs["matches"].items()
                            if (recorded.get("matches") or {}).get(p) != found), None)
    if changed_pattern is not None:
        return f"the pattern {changed_pattern!r} matches other files now"
    return None


def _digest(values: list[str]) -> str:
    return hashlib.sha256(json.dumps(values).encode()).hexdigest()
