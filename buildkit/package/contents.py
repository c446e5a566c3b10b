"""What kind of files a wheel holds, from their bytes and names.

A native binary (an ELF or Mach-O shared object, executable or extension, a PE
``.dll``/``.pyd``/``.exe``) only runs on the platform it was built for, so a wheel
holding one is a platform wheel whatever setuptools thinks of its extension list;
a Python extension module among its files also ties it to one Python ABI.  The
wheel command tags from this, and the audit refuses a pure tag over such content.
"""

from __future__ import annotations

import os
import re
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# Enough for every magic number below, the PE header offset included.
HEAD_SIZE = 4096
# A Python extension module's name carries its ABI: .cpython-311-x86_64-linux-gnu.so,
# .abi3.so (.abi3t.so: PEP 803's free-threaded stable ABI), .cp311-win_amd64.pyd.
EXTENSION_MODULE = re.compile(r"\.(?:cpython-(?P<cp>\d+[a-z]*)-[^./]+|(?P<abi3>abi3t?)|cp(?P<win>\d+)-[^./]+)"
                              r"\.(?:so|pyd)$")
_ELF = b"\x7fELF"
_MACH_O = {b"\xfe\xed\xfa\xce", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xcf\xfa\xed\xfe"}
_UNIVERSAL = {b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"}
# A Java class file starts with CAFEBABE too; its next field is a class-file version
# (45 and up) where a universal binary counts its architectures.
_MOST_ARCHITECTURES = 44


def is_native_binary(path: str | Path) -> bool:
    """Whether the file at ``path`` starts as a native binary (ELF, Mach-O, PE) does."""
    with open(path, "rb") as handle:
        return binary_format(handle.read(HEAD_SIZE)) is not None


def binary_format(head: bytes) -> str | None:
    """``"ELF"``, ``"Mach-O"`` or ``"PE"`` for the first bytes of a native binary
    (``HEAD_SIZE`` of them suffice); None for anything else."""
    magic = head[:4]
    if magic == _ELF:
        return "ELF"
    if magic in _MACH_O:
        return "Mach-O"
    if magic in _UNIVERSAL and len(head) >= 8 and int.from_bytes(head[4:8], "big") <= _MOST_ARCHITECTURES:
        return "Mach-O"
    if head[:2] == b"MZ" and len(head) >= 0x40:  # DOS stub; the PE header's offset is at 0x3c
        offset = int.from_bytes(head[0x3C:0x40], "little")
        if head[offset:offset + 4] == b"PE\0\0":
            return "PE"
    return None


def is_extension_module(name: str) -> bool:
    """Whether a file name is a Python extension module's (it carries an ABI tag)."""
    return EXTENSION_MODULE.search(name) is not None


def module_suffixes() -> tuple[str, ...]:
    """The suffixes of this interpreter's extension modules, the stable ABI's last."""
    return (sysconfig.get_config_var("EXT_SUFFIX") or ".so", ".abi3.so")


@dataclass(frozen=True)
class NativeContent:
    """The native binaries among a wheel's files (paths as in the wheel), and which of
    them are Python extension modules."""

    binaries: tuple[str, ...] = ()
    extension_modules: tuple[str, ...] = ()

    @property
    def platform_specific(self) -> bool:
        return bool(self.binaries)


def native_content(files: Mapping[str, str | Path]) -> NativeContent:
    """Classify ``files`` (path in the wheel -> file on disk) by their first bytes."""
    binaries = []
    for name, path in sorted(files.items()):
        # os-level calls: a wheel of 8,000 headers opens each one, and a file object per
        # file costs several times the three system calls.
        fd = os.open(path, os.O_RDONLY)
        try:
            head = os.read(fd, HEAD_SIZE)
        finally:
            os.close(fd)
        if binary_format(head) is not None:
            binaries.append(name)
    return NativeContent(tuple(binaries), tuple(n for n in binaries if is_extension_module(n)))
