"""Reading ninja's output lines: its ``[done/total] edge`` status, and which edges are bookkeeping.

The no-op ``buildkit develop`` reads ninja's output before anything heavier than this
module is loaded, so it parses without ``re`` (~4 ms to import with ``enum``,
measured with ``-X importtime``); :mod:`buildkit.builder.build_output` reads every
build's output with the same functions.
"""

from __future__ import annotations

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


def command_line(command: list[str]) -> str:
    """``command`` as a shell would read it (:func:`shlex.join`, whose import loads ``re``)."""
    return " ".join(word if word and _SAFE.issuperset(word) else "'" + word.replace("'", "'\"'\"'") + "'"
                    for word in command)


# The characters shlex.quote leaves unquoted.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
