"""One build at a time per build folder: an flock on ``.buildkit/lock``.

Two builds in one folder would overwrite each other's objects and installed
files; the second waits (saying for whom) and gives up after a timeout. The
kernel drops the lock when its holder dies, so a killed build never leaves a
stale lock behind.

A command takes it once and holds it from the CMake build to the last file
setuptools writes.  It is not re-entrant: flock belongs to an open file, so a
second acquisition in the same process would wait for itself; that is refused at
once as the programming error it is.

The no-op ``buildkit develop`` takes it before anything but the standard library's
core is imported, so this module uses ``os.path`` rather than pathlib (whose import,
with ``re`` and ``urllib.parse``, costs ~6 ms of a ~100 ms no-op, measured with
``-X importtime``).
"""

from __future__ import annotations

import fcntl
import os
import time

from buildkit.builder.build_state import LOCK, state_path

_held: set[str] = set()  # lock files this process holds
DEFAULT_TIMEOUT_S = 1800.0


def _lock_file(build_dir: str | os.PathLike[str]) -> str:
    return state_path(os.path.abspath(build_dir), LOCK)


def held_here(build_dir: str | os.PathLike[str]) -> bool:
    """Whether this process holds the build folder's lock (a command in progress builds it)."""
    lock_file = _lock_file(build_dir)
    return os.path.exists(lock_file) and os.path.realpath(lock_file) in _held


def lock_build_folder(build_dir: str | os.PathLike[str], timeout: float = DEFAULT_TIMEOUT_S) -> BuildFolderLock:
    """The lock of one build folder (``<build>/.buildkit/lock``), as a context manager."""
    return BuildFolderLock(os.path.abspath(build_dir), _lock_file(build_dir), timeout)


class BuildFolderLock:
    def __init__(self, build_dir: str, lock_file: str, timeout: float):
        self.build_dir, self.lock_file, self.timeout = build_dir, lock_file, timeout
        self.fd: int | None = None
        self.key = ""

    def __enter__(self) -> None:
        key = os.path.realpath(self.lock_file)
        if key in _held:
            raise RuntimeError(f"{self.lock_file} is already held by this process: one command takes it once")
        deadline = time.monotonic() + self.timeout
        while True:
            os.makedirs(os.path.dirname(self.lock_file), exist_ok=True)
            fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                _acquire(fd, self.build_dir, self.timeout, deadline)
                if _still_the_lock_file(fd, self.lock_file):
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                    break
            except BaseException:
                os.close(fd)
                raise
            # A clean removed the folder (and this lock file) while this command waited:
            # the lock is taken again on the file as it is now, so that no later command
            # locks a new file beside this one.
            os.close(fd)
        self.fd, self.key = fd, key
        _held.add(key)

    def __exit__(self, *exc_info: object) -> None:
        _held.discard(self.key)
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock, as does the process dying
            self.fd = None


def _acquire(fd: int, build_dir: str, timeout: float, deadline: float) -> None:
    if _try_flock(fd):
        return
    # Start-up cost: the console and the error types are loaded only when another build
    # holds the folder (a no-op develop never waits; see the module's docstring).
    from buildkit._util import console
    from buildkit.errors import BuildkitError

    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
    console.info(f"waiting for another build in {build_dir} (pid {holder})")
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if _try_flock(fd):
            return
    raise BuildkitError(
        f"Another build in {build_dir} (pid {holder}) is still running after {timeout:g} s.",
        "Wait for it to finish, or stop it, and run again; buildkit builds one folder one build at a time.")


def _still_the_lock_file(fd: int, lock_file: str) -> bool:
    try:
        now = os.stat(lock_file)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
