"""What a build produced: the one wheel of a folder, file digests."""

from __future__ import annotations

import hashlib
import tarfile
import zipfile
from pathlib import Path


def only_wheel(folder: Path) -> Path:
    """The wheel in ``folder``, which must hold nothing else: no partial wheel, no staging folder."""
    entries = sorted(p.name for p in folder.iterdir())
    assert len(entries) == 1 and entries[0].endswith(".whl"), entries
    return folder / entries[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def archive_members(folder: Path) -> dict[str, bytes]:
    """Every file member of every wheel and sdist below ``folder`` (rejected wheels
    included), keyed ``<archive name>:<member>``."""
    members = {}
    for archive in sorted(folder.rglob("*")):
        if archive.name.endswith(".whl"):
            with zipfile.ZipFile(archive) as wheel:
                members.update({f"{archive.name}:{n}": wheel.read(n) for n in wheel.namelist()})
        elif archive.name.endswith(".tar.gz"):
            with tarfile.open(archive) as sdist:
                members.update({f"{archive.name}:{m.name}": sdist.extractfile(m).read()
                                for m in sdist.getmembers() if m.isfile()})
    return members
