"""Installed files are dated when they were installed, to the nanosecond.

The install step runs CMake's rules with ``CMAKE_INSTALL_ALWAYS`` (CMake's own check takes
files dated within one second of each other for equal), and CMake then writes every file
dated now; but a rule that rewrites the installed file afterwards (``file(RPATH_CHANGE)``
of a target, which every shared library with an install rpath gets) puts back the times
it read before, through ``utime()``, which takes whole seconds (cmake 4.4.5 on Linux,
measured: a library installed at 09:01:47.061369309 reads 09:01:47.000000000 after its
rpath was set).  A library relinked and installed within the second of its last install
then keeps the mtime it had, and whatever compares mtimes (a downstream ninja linking the
installed library, an IDE's indexer, a file watcher, buildkit's own staging for a library
wheel) takes the new file for the old one.  Such a file gets the time CMake last changed
it (its ctime) as its mtime.  A file's date is never taken from its source: a source whose
mtime was put back after a same-size edit would date the new content like the old.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from buildkit._util import console

_SECOND_NS = 1_000_000_000


def redate_second_cut_installs(paths: Iterable[str], started_ns: int) -> list[str]:
    """Give each regular file of ``paths`` whose mtime is a whole second no earlier than the
    second before the install ``started_ns`` (one CMake cut from the time it wrote the file;
    the second before, as file times come from the kernel's coarser clock) its ctime as its
    mtime.  Links and older dates (a rule dating files to ``SOURCE_DATE_EPOCH``) are left as
    they are.  Returns the files whose mtime was set."""
    first_second = (started_ns // _SECOND_NS - 1) * _SECOND_NS
    redated = []
    for path in dict.fromkeys(paths):
        try:
            written = os.lstat(path)
        except OSError:
            continue
        mtime = written.st_mtime_ns
        if not stat.S_ISREG(written.st_mode) or mtime % _SECOND_NS or mtime < first_second:
            continue
        try:
            os.utime(path, ns=(written.st_atime_ns, max(written.st_ctime_ns, mtime)), follow_symlinks=False)
        except OSError as exc:  # the file is installed; only its finer mtime is missing
            console.warn(f"could not date {path} to the nanosecond ({exc}); it keeps the mtime CMake gave it, cut "
                         "to the second, which a tool comparing mtimes may take for the last install's")
            continue
        redated.append(path)
    return redated
