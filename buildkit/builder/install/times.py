"""The installed copies' mtimes, to the nanosecond.

CMake gives a file it installs its build copy's mtime cut to whole seconds (``file(INSTALL)``
of cmake 4.4.5 on Linux, measured: a library built at 06:23:37.193832189 is installed at
06:23:37.000000000).  A library relinked and installed within the second of its last
install then keeps the installed mtime it had, and whatever compares mtimes (a downstream
ninja linking the installed static library, an IDE's indexer, a file watcher) takes the new
file for the old one.  After CMake ran a rule, each file it installed whose mtime is its
source's cut to the second gets the source's own: CMake's own up-to-date check, which
compares whole seconds, reads the same.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

from buildkit._util import console

_SECOND_NS = 1_000_000_000


def restore_subsecond_mtimes(installed: Mapping[str, list[str]], sources: Mapping[str, Iterable[str]]) -> list[str]:
    """For each rule (its key in both mappings): the files CMake ``installed`` for it, the
    ``sources`` it read.  A file takes the mtime of the one source of its name when CMake cut
    that mtime to the second; links, renamed files and names two sources share are left as
    CMake wrote them.  Returns the files whose mtime was set."""
    restored = []
    for key, files in installed.items():
        by_name: dict[str, list[str]] = {}
        for name in sources.get(key, ()):
            by_name.setdefault(os.path.basename(name), []).append(name)
        for path in files:
            candidates = by_name.get(os.path.basename(path), [])
            if len(candidates) != 1:
                continue
            try:
                written, source = os.lstat(path), os.stat(candidates[0])  # the one source of its name
            except OSError:
                continue
            cut = source.st_mtime_ns // _SECOND_NS * _SECOND_NS
            if stat.S_ISREG(written.st_mode) and written.st_mtime_ns == cut != source.st_mtime_ns:
                try:
                    os.utime(path, ns=(written.st_atime_ns, source.st_mtime_ns), follow_symlinks=False)
                except OSError as exc:  # the file is installed; only its finer mtime is missing
                    console.warn(f"could not give {path} its build copy's mtime ({exc}); it keeps the one CMake "
                                 "gave it, cut to the second, which a tool comparing mtimes may take for the last "
                                 "install's")
                    continue
                restored.append(path)
    return restored
