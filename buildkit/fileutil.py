"""Writing generated files: atomically, and only when the content changes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
