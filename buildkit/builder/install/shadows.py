"""Extension modules that would shadow the ones an install just wrote.

Python imports ``pkg/_mod`` from the first file it finds in the order of
``importlib.machinery.EXTENSION_SUFFIXES``: its own ``.cpython-3XY-<platform>.so``,
then ``.abi3.so``, then ``.so``.  A module rebuilt for the stable ABI beside an older
``.cpython-312-...so`` of the same name is never imported: the old code runs and the
develop said "done".  So after an install, each extension module it wrote is looked
for under the suffixes that come earlier in this interpreter's order: a file an
earlier install of this build folder wrote is removed, with a message naming it; one
buildkit did not write is the user's, and the install stops naming it.  Modules for
another interpreter (``.cpython-311-...so`` under 3.12) are not in this order and
stay: alternating interpreters in one checkout keeps working.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
from collections.abc import Collection, Iterable
from pathlib import Path

from buildkit._util import console
from buildkit.builder.install.manifest import read_install_manifest
from buildkit.errors import BuildkitError


def _split_suffix(name: str, suffixes: list[str]) -> tuple[str, int] | None:
    """The module name and the index of its suffix in ``suffixes`` (the most specific that matches)."""
    for index, suffix in enumerate(suffixes):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], index
    return None


# What names an extension module of some CPython: .cpython-3XY[t]-<platform>.so, .cp3XY-<platform>.pyd.
_VERSIONED_MODULE = re.compile(r"\.(?:cpython-\d+[a-z]*-[^./]+\.so|cp\d+[a-z]*-[^./]+\.pyd)$")


def another_interpreters_module(path: str, suffixes: list[str] | None = None) -> bool:
    """Whether ``path`` is an extension module built for another interpreter than this one:
    a versioned suffix that is not among this interpreter's."""
    order = importlib.machinery.EXTENSION_SUFFIXES if suffixes is None else suffixes
    versioned = _VERSIONED_MODULE.search(path)
    return versioned is not None and versioned.group() not in order


def shadowing_modules(written: Iterable[str], suffixes: list[str] | None = None) -> list[tuple[str, str]]:
    """(shadowing file, written module) for every file beside a module in ``written`` that
    has its name and a suffix earlier in ``suffixes`` (this interpreter's import order)."""
    order = list(importlib.machinery.EXTENSION_SUFFIXES if suffixes is None else suffixes)
    found = []
    for path in written:
        folder, name = os.path.split(path)
        split = _split_suffix(name, order)
        if split is None:
            continue
        module, index = split
        for earlier in order[:index]:
            candidate = os.path.join(folder, module + earlier)
            if os.path.lexists(candidate):
                found.append((candidate, path))
    return found


def remove_shadowing_modules(written: Collection[str], build_dir: Path, suffixes: list[str] | None = None) -> list[str]:
    """Remove the files that would shadow a module in ``written`` (the files this install
    wrote) and that an earlier install of ``build_dir`` wrote (its manifests, not yet
    rewritten); refuse, by name, one that no install of buildkit's wrote, or that this
    very install wrote beside the other.  Returns the removed files."""
    shadows = shadowing_modules(written, suffixes)
    if not shadows:
        return []
    installed_before = {str(path) for path in read_install_manifest(build_dir)}
    written_here = set(written)
    theirs = [(shadow, module) for shadow, module in shadows
              if shadow in written_here or shadow not in installed_before]
    if theirs:
        lines = "\n".join(f"  {shadow} (imported instead of {os.path.basename(module)})" for shadow, module in theirs)
        raise BuildkitError(
            f"Python would import a stale module instead of the one this build installed:\n{lines}",
            "Delete each named file (buildkit did not put it there, so it leaves it alone), "
            "or stop installing two builds of one module, then run the build again.")
    removed = []
    for shadow, module in shadows:
        os.unlink(shadow)
        console.info(f"removed {shadow}: an earlier install's build of the module, "
                     f"imported before the new {os.path.basename(module)}")
        removed.append(shadow)
    return removed
