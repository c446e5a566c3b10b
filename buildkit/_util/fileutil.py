"""Writing generated files: atomically, and only when the content changes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

KEEP_MARKER = ".buildkit-keep"
# Never removed, never packed into an sdist: version control, IDE state and
# environments cannot be rebuilt by a build.
PROTECTED_DIR_NAMES = frozenset({".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".idea", ".vscode",
                                 ".tox", ".nox", ".conda"})
PROTECTED_FILE_NAMES = frozenset({".env", ".envrc", KEEP_MARKER})


def write_atomic(target: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``target`` through a sibling temp file renamed over it.

    A reader (a parallel link, an import) sees the old file or the new one, never
    half of one; a failed or interrupted write leaves no temp file behind.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)  # mkstemp creates 0600; installed files must be readable
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_if_changed(target: Path, text: str, mode: int = 0o644) -> bool:
    """Write ``text`` (UTF-8, LF) to ``target`` atomically; True when it changed.

    An unchanged file keeps its mtime, so incremental builds and editable installs
    see no spurious change.
    """
    target = Path(target)
    try:
        if target.read_text(encoding="utf-8") == text:
            return False
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        pass
    write_atomic(target, text.encode("utf-8"), mode)
    return True


def read_json(path: Path) -> Any:
    """A JSON file's content, or None when it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, data: Any) -> None:
    """Write atomically: a reader sees the old record or the new one, never half."""
    write_atomic(Path(path), (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def mtime_ns(path: Path) -> int | None:
    try:
        return Path(path).stat().st_mtime_ns
    except OSError:
        return None


class FolderResolver:
    """``Path.resolve()`` of many files' folders, each folder resolved once and paths kept
    as strings: thousands of installed files share a few dozen folders, and both a
    resolve and a ``Path`` object per file cost more than the rest of their handling."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def folder(self, folder: str | Path) -> str:
        key = str(folder)
        if key not in self._folders:
            self._folders[key] = os.path.realpath(key)
        return self._folders[key]

    def file(self, path: str | Path) -> str:
        """The path with its folder resolved; the file itself may be a link (``libfoo.so``)."""
        folder, name = os.path.split(os.path.abspath(path))
        return os.path.join(self.folder(folder), name)


def point_symlink(link: str, target: str) -> bool:
    """Make ``link`` a symbolic link to ``target`` (a path or a relative name), replacing what
    stands there; whether anything changed."""
    if os.path.islink(link) and os.readlink(link) == target:
        return False
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)
    return True


def relative_under(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` (both resolved strings), posix; None when not below it."""
    prefix = folder.rstrip(os.sep) + os.sep
    return path[len(prefix):].replace(os.sep, "/") if path.startswith(prefix) else None


# The prefix of the folder a wheel build writes into beside its dist folder; dot-named, so
# that `dist/*` globs (twine upload) skip it.
STAGING_PREFIX = ".buildkit-wheel-"


def process_folder(parent: Path, prefix: str) -> Path:
    """A new folder in ``parent`` for this process to write into before it moves its result
    beside it (one file system: the move is atomic); first, those of processes that died
    without cleaning up are removed."""
    for folder in parent.glob(f"{prefix}*-*"):
        pid = folder.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not process_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent))


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def relative_below(path: str, base: str) -> str:
    """``os.path.relpath`` for a path written below ``base``, without relpath's two
    ``abspath`` calls per file (thousands of files per wheel)."""
    path, base = os.path.normpath(path), os.path.normpath(base)
    prefix = base.rstrip(os.sep) + os.sep
    return path[len(prefix):] if path.startswith(prefix) else os.path.relpath(path, base)
