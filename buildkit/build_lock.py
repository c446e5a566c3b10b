"""One build at a time per build folder: an flock on ``.buildkit/lock``.

Two builds in one folder would overwrite each other's objects and installed
files; the second waits (saying for whom) and gives up after a timeout. The
kernel drops the lock when its holder dies, so a killed build never leaves a
stale lock behind.

The lock is re-entrant within a process: ``setup()`` holds it from the CMake build
to the last file setuptools writes, and the driver inside takes it again. (flock
belongs to an open file, so a second open in the same process would wait for
itself.)
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from . import console
from .errors import BuildkitError


_held: dict[str, int] = {}  # lock file -> how many holders in this process
DEFAULT_TIMEOUT_S = 1800.0


def lock_build_folder(build_dir: Path, timeout: float = DEFAULT_TIMEOUT_S):
    """The lock of one build folder (``<build>/.buildkit/lock``), as a context manager."""
    build_dir = Path(build_dir).absolute()
    return build_folder_lock(build_dir, build_dir / ".buildkit" / "lock", timeout)


@contextmanager
def build_folder_lock(build_dir: Path, lock_file: Path, timeout: float) -> Iterator[None]:
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    key = str(lock_file.resolve())
    if _held.get(key):
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, build_dir, timeout)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[key] = 1
        yield
    finally:
        _held.pop(key, None)
        os.close(fd)  # closing releases the flock, as does the process dying


def _acquire(fd: int, build_dir: Path, timeout: float) -> None:
    if _try_flock(fd):
        return
    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
    console.info(f"waiting for another build in {build_dir} (pid {holder})")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if _try_flock(fd):
            return
    raise BuildkitError(
        f"Another build in {build_dir} (pid {holder}) is still running after {timeout:g} s.",
        "Wait for it to finish, or stop it, and run again; buildkit builds one folder one build at a time.")


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
