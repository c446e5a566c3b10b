"""What a build produced: the one wheel of a folder, file digests."""

from __future__ import annotations

import hashlib
from pathlib import Path


def only_wheel(folder: Path) -> Path:
    """The wheel in ``folder``, which must hold nothing else: no partial wheel, no staging folder."""
    entries = sorted(p.name for p in folder.iterdir())
    assert len(entries) == 1 and entries[0].endswith(".whl"), entries
    return folder / entries[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
