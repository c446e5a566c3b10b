"""One build at a time per build folder: an flock on ``.buildkit/lock``.

Two builds in one folder would overwrite each other's objects and installed
files; the second waits (saying for whom) and gives up after a timeout. The
kernel drops the lock when its holder dies, so a killed build never leaves a
stale lock behind.

A command takes it once and holds it from the CMake build to the last file
setuptools writes.  It is not re-entrant: flock belongs to an open file, so a
second acquisition in the same process would wait for itself; that is refused at
once as the programming error it is.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from buildkit._util import console
from buildkit.errors import BuildkitError

_held: set[str] = set()  # lock files this process holds
DEFAULT_TIMEOUT_S = 1800.0


def held_here(build_dir: Path) -> bool:
    """Whether this process holds the build folder's lock (a command in progress builds it)."""
    lock_file = Path(build_dir).absolute() / ".buildkit" / "lock"
    return lock_file.exists() and str(lock_file.resolve()) in _held


def lock_build_folder(build_dir: Path, timeout: float = DEFAULT_TIMEOUT_S):
    """The lock of one build folder (``<build>/.buildkit/lock``), as a context manager."""
    build_dir = Path(build_dir).absolute()
    return build_folder_lock(build_dir, build_dir / ".buildkit" / "lock", timeout)


@contextmanager
def build_folder_lock(build_dir: Path, lock_file: Path, timeout: float) -> Iterator[None]:
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    key = str(lock_file.resolve())
    if key in _held:
        raise RuntimeError(f"{lock_file} is already held by this process: one command takes it once")
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, build_dir, timeout)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held.add(key)
        yield
    finally:
        _held.discard(key)
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
