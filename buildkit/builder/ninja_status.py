"""Reading ninja's output lines: its ``[done/total] edge`` status, and which edges are bookkeeping.

The no-op ``buildkit develop`` reads ninja's output before anything heavier than this
module is loaded, so it parses without ``re`` (~4 ms to import with ``enum``,
measured with ``-X importtime``); :mod:`buildkit.builder.build_output` reads every
build's output with the same functions.
"""

from __future__ import annotations

import os

from buildkit.builder.build_state import NINJA_LOG

NO_WORK = "ninja: no work to do."
# Edges of CMake's own bookkeeping: the CONFIGURE_DEPENDS glob check runs on every ninja
# run; when it finds a change, the "Re-running CMake..." edge that follows is real work.
BOOKKEEPING_EDGES = frozenset({"Re-checking globbed directories..."})


def status(text: str) -> tuple[int, int, str] | None:
    """(done, total, edge) of a status line such as ``[3/40] Building CXX object x.o``;
    None for any other line."""
    if not text.startswith("["):
        return None
    end = text.find("]")
    done, slash, total = text[1:end].partition("/")
    if end < 0 or not slash or not (done.isdecimal() and total.isdecimal()):
        return None
    return int(done), int(total), text[end + 1:].strip()


def is_bookkeeping(edge: str) -> bool:
    """Whether an edge is CMake's glob check: its description, or under ``ninja -v`` its
    command (``.../cmake -P .../VerifyGlobs.cmake``)."""
    if edge in BOOKKEEPING_EDGES:
        return True
    words = edge.split()
    return (len(words) >= 3 and words[-1].endswith("VerifyGlobs.cmake") and words[-2] == "-P"
            and words[-3].endswith(("cmake", "cmake.exe")))


def writes_only_its_outputs(edge: str) -> bool:
    """Whether an edge is one of CMake's compile or link steps (``Building CXX object x.o``,
    ``Linking CXX shared library libx.so``): a compiler or linker writes the outputs ninja
    knows of and nothing else, where a custom command may write anywhere."""
    words = edge.split()
    return len(words) >= 4 and (words[0] == "Linking" or (words[0] == "Building" and words[2] == "object"))


def log_stamp(build_dir: str) -> tuple[int, int] | None:
    """The size and inode of the build folder's ``.ninja_log`` before a build."""
    try:
        info = os.stat(os.path.join(build_dir, NINJA_LOG))
    except OSError:
        return None
    return info.st_size, info.st_ino


def outputs_since(build_dir: str, stamp: tuple[int, int] | None) -> set[str] | None:
    """The outputs ninja wrote since ``stamp`` (absolute paths), from the lines it added to
    ``.ninja_log``; None when that cannot be told (no log, or ninja rewrote it)."""
    now = log_stamp(build_dir)
    if stamp is None or now is None or now[1] != stamp[1] or now[0] < stamp[0]:
        return None
    with open(os.path.join(build_dir, NINJA_LOG), "rb") as handle:
        handle.seek(stamp[0])
        added = handle.read().decode("utf-8", errors="surrogateescape")
    outputs = set()
    for line in added.splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) < 5:
            continue
        outputs.add(os.path.normpath(os.path.join(build_dir, fields[3])))
    return outputs


def command_line(command: list[str]) -> str:
    """``command`` as a shell would read it (:func:`shlex.join`, whose import loads ``re``)."""
    return " ".join(word if word and _SAFE.issuperset(word) else "'" + word.replace("'", "'\"'\"'") + "'"
                    for word in command)


# The characters shlex.quote leaves unquoted.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
