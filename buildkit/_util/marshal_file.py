"""Records read before anything heavy is imported: marshal data behind a header line.

The no-op develop reads its record and the install step's summary with nothing but
the interpreter's start-up modules loaded (json alone costs ~6 ms to import with
``re`` and ``enum``, measured with ``-X importtime``).  marshal's format belongs to
the interpreter's version, so the header names it: a file another interpreter wrote
reads as missing.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op develop goes without
if TYPE_CHECKING:
    from typing import Any


def header(kind: str) -> bytes:
    return f"buildkit {kind}, python {sys.hexversion:x}\n".encode()


def read(path: str, header: bytes) -> dict[str, Any] | None:
    """The dict written to ``path`` under ``header``; None when missing, another kind or
    interpreter's, or not readable as one."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if not data.startswith(header):
        return None
    try:
        found = marshal.loads(data[len(header):])
    except (EOFError, ValueError, TypeError):
        return None
    return found if isinstance(found, dict) else None


def write(path: str, header: bytes, data: dict[str, Any]) -> None:
    """Through a temporary file renamed over ``path``: a reader sees the old one or the new one."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as handle:
            handle.write(header + marshal.dumps(data))
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
