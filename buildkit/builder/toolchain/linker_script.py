"""Prioritized text: a GNU ld script that puts chosen functions first in ``.text``.

Grouping hot functions at the start of ``.text`` improves instruction-cache and
TLB behaviour; on aarch64 servers the gain is measurable.  The script is GNU ld's
own default script (from ``ld --verbose``) with one ``*(.text.NAME)`` line per
symbol added at the top of the ``.text`` output section.  Each symbol gets its
own line because, within a single ``*(...)`` pattern list, ld keeps input order
rather than pattern order.  The objects must be compiled with
``-ffunction-sections`` so that every function has a ``.text.NAME`` section.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from buildkit._util import console
from buildkit._util.fileutil import write_text_if_changed
from buildkit.errors import BuildkitError, ToolchainError

VARIABLE = "USE_PRIORITIZED_TEXT_FOR_LD"
_DELIMITER = "=" * 50
_TEXT_SECTION = re.compile(r"^([ \t]*)\.text\s*:", re.MULTILINE)
# Characters that would end a section pattern early or change the script's syntax.
_UNSAFE = re.compile(r"[\s(){};\"',]")
SECTION_FLAGS = ("-ffunction-sections", "-fdata-sections")


def parse_symbols(text: str, source: str = "symbols file") -> list[str]:
    """Symbol names, one per line; blank lines and '#' comments are skipped and a
    repeated name keeps its first position."""
    symbols: dict[str, None] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        if _UNSAFE.search(name):
            raise BuildkitError(
                f"{source}, line {number}: {name!r} is not a symbol name.",
                "Write one (mangled) symbol name per line, as `nm` prints it, "
                "with no spaces, quotes or parentheses.",
            )
        symbols.setdefault(name)
    return list(symbols)


def read_symbols(path: str | os.PathLike[str]) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise BuildkitError(f"Cannot read the prioritized symbols file {os.fspath(path)!r}: "
                            f"{error.strerror or error}.",
                            "Check the path; it lists one symbol name per line.") from None
    return parse_symbols(text, os.fspath(path))


def default_linker_script(ld: str = "ld") -> str:
    """GNU ld's built-in script, from ``<ld> --verbose``."""
    program = shutil.which(ld)
    hint = "Install GNU binutils, or set LD to the path of a GNU ld (ld.bfd)."
    if program is None:
        raise ToolchainError(f"The linker '{ld}' was not found, so the default linker "
                             "script cannot be read.", hint)
    result = subprocess.run([program, "--verbose"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ToolchainError(f"'{ld} --verbose' failed with exit status {result.returncode}: "
                             f"{result.stderr.strip()[-500:]}", hint)
    return extract_default_script(result.stdout, ld)


def extract_default_script(verbose_output: str, ld: str = "ld") -> str:
    """The script between the two lines of 50 '=' that ``ld --verbose`` prints."""
    lines = verbose_output.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if line.strip() == _DELIMITER]
    if len(marks) < 2:
        raise BuildkitError(
            f"'{ld} --verbose' did not print a default linker script between two lines of "
            f"{len(_DELIMITER)} '=' characters.",
            "Prioritized text needs GNU ld (ld.bfd); lld and gold print no default script. "
            f"Set LD to a GNU ld, or unset {VARIABLE}.",
        )
    return "".join(lines[marks[0] + 1:marks[1]])


def prioritized_script(default_script: str, symbols: Sequence[str]) -> str:
    """``default_script`` with ``*(.text.SYMBOL)`` lines, in order, opening ``.text``."""
    headers = list(_TEXT_SECTION.finditer(default_script))
    if len(headers) != 1:
        found = "none" if not headers else f"{len(headers)}"
        raise BuildkitError(
            f"Expected exactly one '.text :' output section in the default linker script, "
            f"found {found}.",
            f"This ld's script has an unexpected layout; use GNU ld's default script "
            f"(set LD to ld.bfd) or unset {VARIABLE}.",
        )
    header = headers[0]
    brace = default_script.find("{", header.end())
    between = default_script[header.end():brace]
    if brace < 0 or any(char in between for char in ";}"):
        raise BuildkitError(
            "The '.text :' output section in the default linker script is not followed by '{'.",
            f"Use GNU ld's default script (set LD to ld.bfd) or unset {VARIABLE}.",
        )
    indent = header.group(1) + "  "
    inserted = "".join(f"{indent}*(.text.{symbol})\n" for symbol in symbols)
    head, tail = default_script[:brace + 1], default_script[brace + 1:]
    # GNU ld puts '{' on its own line; a one-line "{ *(.text) }" is split so the
    # default contents still follow the prioritized ones.
    tail = tail.split("\n", 1)[1] if re.match(r"[ \t]*\r?\n", tail) else indent + tail.lstrip(" \t")
    return f"{head}\n{inserted}{tail}"


def write_linker_script(symbols_file: str | os.PathLike[str], output: str | os.PathLike[str],
                        ld: str = "ld") -> Path:
    """Generate the script; ``output`` is left untouched when already up to date, so
    its timestamp doesn't trigger a relink."""
    symbols = read_symbols(symbols_file)
    if not symbols:
        raise BuildkitError(f"The prioritized symbols file {os.fspath(symbols_file)!r} "
                            "lists no symbols.",
                            f"Add one symbol name per line, or unset {VARIABLE}.")
    target = Path(output)
    # Atomic: a parallel link sees the old script or the new one, never half.
    write_text_if_changed(target, prioritized_script(default_linker_script(ld), symbols))
    return target



def prioritized_text_flags(enabled: bool, script_path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Flag additions for the build: ``-T<script>`` for the link, function and data
    sections for the compiles.  Empty when disabled."""
    if not enabled:
        return {}
    # Absolute, because the linker runs from CMake's build directory.
    return {
        "LDFLAGS": [f"-T{os.path.abspath(script_path)}"],
        "CFLAGS": list(SECTION_FLAGS),
        "CXXFLAGS": list(SECTION_FLAGS),
    }




def maybe_recommend(enabled: bool | None, machine: str, platform: str) -> bool:
    """On Linux aarch64, suggest the feature when the user hasn't chosen either way."""
    if enabled is not None or not platform.startswith("linux"):
        return False
    if machine.lower() not in {"aarch64", "arm64"}:
        return False
    console.boxed(
        "Recommendation: prioritized text",
        f"On aarch64, building with {VARIABLE}=1 improves runtime performance: hot\n"
        "functions are placed together at the start of .text by a generated linker script.\n"
        f"Enable it with `export {VARIABLE}=1` before building (needs GNU ld),\n"
        f"or set {VARIABLE}=0 to keep the default layout and hide this message.",
    )
    return True


def cmake_defines(symbols: Path, script: Path) -> dict[str, str]:
    """The CMake flags that link with a prioritized-text script made from ``symbols`` (written to ``script``)."""
    if not symbols.is_file():
        raise BuildkitError(
            f"USE_PRIORITIZED_TEXT_FOR_LD=1 but {symbols} does not exist.",
            "List the hot functions there, one symbol per line, or unset USE_PRIORITIZED_TEXT_FOR_LD.")
    added = prioritized_text_flags(True, write_linker_script(symbols, script))
    return {
        "CMAKE_C_FLAGS": " ".join(added["CFLAGS"]),
        "CMAKE_CXX_FLAGS": " ".join(added["CXXFLAGS"]),
        "CMAKE_SHARED_LINKER_FLAGS": " ".join(added["LDFLAGS"]),
        "CMAKE_EXE_LINKER_FLAGS": " ".join(added["LDFLAGS"]),
    }
