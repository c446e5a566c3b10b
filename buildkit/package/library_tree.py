"""Packaging-time fixes that make a library-only wheel usable by any C++ consumer.

An ordinary CMake library installs a versioned chain of names for each shared
library (``libfoo.so -> libfoo.so.3 -> libfoo.so.3.4.1``) and pkg-config files with
the install prefix written in.  A wheel holds no symlinks and does not know where it
will be unpacked: packaged as they are, the chain becomes three copies of the
library and the ``.pc`` file points at the build machine's folder.  So, on the staged
copy of the tree that a wheel is packed from (never on the develop install):

* each shared library ships once, under the name the loader asks for (its SONAME);
  the other names of its chain are dropped, and the CMake files and the ``-l`` flags
  of the ``.pc`` files that named them are pointed at the name kept
  (``-lfoo`` needs ``libfoo.so``, so it becomes ``-l:libfoo.so.3``);
* each ``.pc`` file gets ``prefix=${pcfiledir}/<up to the package folder>``, and every
  other spelling of the install prefix in it becomes ``${prefix}``.

Only ELF libraries are collapsed (a Mach-O chain ships as CMake installed it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from buildkit.package.elf import read_elf_file

_LIBS_LINE = re.compile(r"^(\s*Libs(?:\.private)?\s*:)(.*)$")
_PREFIX_LINE = re.compile(r"^\s*prefix\s*=")


@dataclass(frozen=True)
class TreeFixes:
    """What :func:`fix_library_tree` changed: the names dropped (each with the one kept
    in its place) and the text files rewritten, as paths relative to the package folder."""

    renamed: Mapping[str, str]
    rewritten: tuple[str, ...]

    def describe(self) -> list[str]:
        """One line per change, for the detailed build output."""
        lines = [f"shipped once: {old} is {new} in the wheel (a wheel holds no symlinks)"
                 for old, new in sorted(self.renamed.items())]
        return lines + [f"rewritten for the wheel: {path} (install prefix and library names)"
                        for path in self.rewritten]


def fix_library_tree(folder: Path, files: Sequence[str], install_prefixes: Sequence[Path]) -> tuple[list[str],
                                                                                                     TreeFixes]:
    """Collapse the symlink chains under ``folder`` (a staged copy, changed in place), fix
    what named the dropped names, relocate the ``.pc`` files.  Returns the files to ship
    (relative to ``folder``) and what changed."""
    folder = Path(folder)
    renamed, materialized = _collapse_chains(folder, files)
    shipped = sorted({*(f for f in files if f not in renamed), *materialized})
    names = {PurePosixPath(old).name: PurePosixPath(new).name for old, new in renamed.items()}
    rewritten = []
    for relative in shipped:
        path = folder / relative
        if relative.endswith(".cmake") and names:
            changed = _rewrite(path, _rename_libraries(path.read_text(encoding="utf-8"), names))
        elif relative.endswith(".pc"):
            changed = _rewrite(path, relocate_pkg_config(path.read_text(encoding="utf-8"),
                                                         os.path.relpath(folder, path.parent), install_prefixes,
                                                         names))
        else:
            continue
        if changed:
            rewritten.append(relative)
    return shipped, TreeFixes(renamed, tuple(rewritten))


def _collapse_chains(folder: Path, files: Sequence[str]) -> tuple[dict[str, str], set[str]]:
    """Ship each ELF shared library once, under its SONAME.  Returns dropped name -> kept
    name, and the kept names that were not among ``files`` (a SONAME with no link)."""
    real_root = folder.resolve()
    names_of: dict[str, list[str]] = {}  # real file -> every shipped name that is it
    for relative in files:
        resolved = Path(os.path.realpath(folder / relative))
        if resolved.is_file() and resolved.is_relative_to(real_root):  # a link out of the tree ships as a copy
            names_of.setdefault(resolved.relative_to(real_root).as_posix(), []).append(relative)
    renamed: dict[str, str] = {}
    materialized: set[str] = set()
    for real, names in sorted(names_of.items()):
        elf = read_elf_file(folder / real)
        if elf is None:
            continue  # not a library: a symlinked header ships as the copy it becomes
        soname = elf.soname if elf.soname and "/" not in elf.soname else PurePosixPath(real).name
        keep = (PurePosixPath(real).parent / soname).as_posix()
        if names == [keep] and keep == real:
            continue
        if keep != real:
            target = folder / keep
            if target.is_symlink() or target.exists():
                target.unlink()
            os.replace(folder / real, target)
        for name in names:
            if name == keep:
                continue
            stale = folder / name
            if stale.is_symlink() or stale.exists():
                stale.unlink()
            renamed[name] = keep
        materialized.add(keep)
    return renamed, materialized


def _boundary_pattern(names: Sequence[str]) -> re.Pattern[str]:
    """Whole file names only: ``libfoo.so`` must not match inside ``libfoo.so.3``."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w.+-])({alternatives})(?![\w.+-])")


def _rename_libraries(text: str, names: Mapping[str, str]) -> str:
    return _boundary_pattern(list(names)).sub(lambda match: names[match.group(1)], text)


def relocate_pkg_config(text: str, up_to_package: str, install_prefixes: Sequence[Path],
                        names: Mapping[str, str]) -> str:
    """A ``.pc`` file's text with ``prefix`` relative to ``${pcfiledir}`` (``up_to_package``
    is the way from its folder to the package folder), the install prefix's spellings
    replaced by ``${prefix}`` and ``-l`` flags pointed at the library names kept."""
    relocated = "${pcfiledir}" + ("" if up_to_package == "." else "/" + up_to_package.replace(os.sep, "/"))
    spellings = sorted({str(s) for p in install_prefixes for s in (Path(p), Path(p).resolve())}, key=len, reverse=True)
    prefix_pattern = re.compile("(" + "|".join(re.escape(s) for s in spellings) + r")(?=[/\s\"']|$)") if spellings \
        else None
    lines, has_prefix = [], False
    for original in text.splitlines(keepends=True):
        if _PREFIX_LINE.match(original) and not has_prefix:
            lines.append(f"prefix={relocated}\n")
            has_prefix = True
            continue
        line = original if prefix_pattern is None else prefix_pattern.sub("${prefix}", original)
        if (libs := _LIBS_LINE.match(line)) and names:
            line = libs.group(1) + re.sub(r"(?<!\S)-l(\S+)", lambda m: _link_flag(m.group(1), names),
                                          libs.group(2)) + ("\n" if line.endswith("\n") else "")
        lines.append(line)
    if not has_prefix and any("${prefix}" in line for line in lines):
        lines.insert(0, f"prefix={relocated}\n")
    return "".join(lines)


def _link_flag(name: str, names: Mapping[str, str]) -> str:
    """``-lfoo`` where ``libfoo.so`` was dropped: ``-l:<the name kept>``."""
    kept = names.get(f"lib{name}.so")
    return f"-l:{kept}" if kept else f"-l{name}"


def _rewrite(path: Path, text: str) -> bool:
    if text == path.read_text(encoding="utf-8"):
        return False
    path.write_text(text, encoding="utf-8")
    return True
