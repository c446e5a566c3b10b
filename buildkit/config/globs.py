"""Package-data glob patterns: checked when ``[tool.buildkit]`` is read, matched when
the wheel's files are collected.

``*``, ``?`` and ``[..]`` stay inside one path segment; a ``**`` segment spans
directories.  Patterns are relative to the package directory and may not leave it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Sequence

from buildkit.errors import ConfigError


@lru_cache(maxsize=None)
def check_glob(pattern: str) -> tuple[str, ...]:
    """The pattern's path segments, after checking it stays inside the package."""
    segments = tuple(pattern.split("/"))
    if pattern.startswith("/") or any(s in {"", ".", ".."} for s in segments):
        raise ConfigError(f"Package-data pattern {pattern!r} is not a relative path inside the package.",
                          "Write it relative to the package directory, e.g. 'lib/*.so*', without "
                          "a leading '/', '.' or '..' segments.")
    if any("**" in s and s != "**" for s in segments):
        raise ConfigError(f"Package-data pattern {pattern!r} uses '**' inside a name.",
                          "'**' must be a whole path segment, e.g. 'include/**/*.h'.")
    return segments


def _match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":  # any number of directories, including none
        return any(_match(pattern[1:], parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _match(pattern[1:], parts[1:])


def glob_match(pattern: str, path: str) -> bool:
    """Whether a posix ``path`` matches ``pattern``: ``*``, ``?`` and ``[..]`` stay inside
    one segment, and a ``**`` segment spans directories (``include/**/*.h`` matches
    ``include/a.h`` and ``include/x/y/a.h``)."""
    return _match(check_glob(pattern), path.split("/"))
