"""Package-data glob patterns: checked when ``[tool.buildkit]`` is read, matched when
the wheel's files are collected.

``*``, ``?`` and ``[..]`` stay inside one path segment; a ``**`` segment spans
directories.  Patterns are relative to the package directory and may not leave it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

from buildkit.errors import ConfigError


@cache
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


def _segment_regex(segment: str) -> str:
    """fnmatch's ``*``, ``?`` and ``[..]`` for one path segment: none of them matches ``/``."""
    out, index = [], 0
    while index < len(segment):
        char = segment[index]
        index += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = index + (segment[index:index + 1] == "!")
            end += segment[end:end + 1] == "]"
            end = segment.find("]", end)
            if end < 0:
                out.append("\\[")
                continue
            body = segment[index:end].replace("\\", "\\\\")
            if body.startswith("!"):
                out.append("[^/" + body[1:] + "]")
            else:  # a leading ^ is a character here, as in fnmatch
                out.append("(?!/)[" + ("\\" + body if body.startswith("^") else body) + "]")
            index = end + 1
        else:
            out.append(re.escape(char))
    return "".join(out)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    segments: list[str] = []
    for segment in check_glob(pattern):
        if not (segment == "**" and segments[-1:] == ["**"]):  # `**/**` spans what one `**` spans
            segments.append(segment)
    regex = ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":  # any number of directories, including none
            if last and regex.endswith("/"):
                regex = regex[:-1] + "(?:/[^/]*)*"
            elif last:
                regex += "(?:[^/]*(?:/[^/]*)*)?"
            else:
                regex += "(?:[^/]*/)*"
            continue
        regex += _segment_regex(segment) + ("" if last else "/")
    return re.compile(regex)


def glob_match(pattern: str, path: str) -> bool:
    """Whether a posix ``path`` matches ``pattern``: ``*``, ``?`` and ``[..]`` stay inside
    one segment, and a ``**`` segment spans directories (``include/**/*.h`` matches
    ``include/a.h`` and ``include/x/y/a.h``).  Each pattern is compiled once: the wheel's
    files are matched against every rule, thousands of files times a dozen patterns."""
    return _compiled(pattern).fullmatch(path) is not None


@cache
def _compiled_any(patterns: tuple[str, ...]) -> Callable[[str], object]:
    if not patterns:
        return lambda path: None
    return re.compile("|".join(f"(?:{_compiled(p).pattern})" for p in patterns)).fullmatch


def glob_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """:func:`glob_match_any` with ``patterns`` bound: for matching many paths."""
    match = _compiled_any(tuple(patterns))
    return lambda path: match(path) is not None


def glob_match_any(patterns: Iterable[str], path: str) -> bool:
    """Whether ``path`` matches one of ``patterns``: one regular expression for them all,
    so a rule of a dozen patterns costs one match per file, not a dozen."""
    return _compiled_any(tuple(patterns))(path) is not None
