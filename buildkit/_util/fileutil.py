"""Writing generated files: atomically, and only when the content changes."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

KEEP_MARKER = ".buildkit-keep"
# Never removed, never packed into an sdist: version control, IDE state and
# environments cannot be rebuilt by a build.
PROTECTED_DIR_NAMES = frozenset({".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".idea", ".vscode",
                                 ".tox", ".nox", ".conda"})
PROTECTED_FILE_NAMES = frozenset({".env", ".envrc", KEEP_MARKER})


def write_text_if_changed(target: Path, text: str, mode: int = 0o644) -> bool:
    """Write ``text`` to ``target``; True when it changed.

    An unchanged file keeps its mtime, so incremental builds and editable installs
    see no spurious change; a sibling temp file renamed over the target means a
    reader (or a build interrupted halfway) never sees a half-written file.
    """
    target = Path(target)
    try:
        if target.read_text(encoding="utf-8") == text:
            return False
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, mode)  # mkstemp creates 0600; installed modules must be readable
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def read_json(path: Path) -> Any:
    """A JSON file's content, or None when it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, data: Any) -> None:
    """Write atomically: a reader sees the old record or the new one, never half; a
    failed write leaves no temporary file behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def mtime_ns(path: Path) -> int | None:
    try:
        return Path(path).stat().st_mtime_ns
    except OSError:
        return None
