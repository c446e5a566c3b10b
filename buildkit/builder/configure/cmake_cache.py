"""Read a ``CMakeCache.txt`` exactly the way CMake itself reads it.

The rules mirror CMake's sources (checked against CMake 4.x, and exercised against
the real ``cmake`` in ``tests/test_cmake_cache.py``):

* ``cmCacheManager::LoadCache``: lines are split on ``\\n`` and lose one trailing
  ``\\r`` (``kwsys::SystemTools::GetLineFromStream``) and everything from a NUL on
  (the line is used as a C string).  Leading `` \\t\\r`` is skipped; blank lines and
  lines starting with ``#`` are comments.  A ``//`` line is help text and the line
  *after* it is parsed as an entry as is: not stripped, not tested for ``#`` or
  blankness, so a dangling help comment is a parse error.  Line numbers count the
  virtual empty line at end of file that a trailing help comment runs into.
* ``cmState::ParseCacheEntry``: the four regexes below, tried in order; a value of
  two or more characters wrapped in single quotes loses them (``OutputValue``
  writes values ending in a space or tab that way).  An unknown type string means
  ``STRING`` (``StringToCacheEntryType``).  A line that no regex matches (one
  without ``=``) makes CMake fail with "Parse error in cache file".
* ``cmValue::IsOn``/``IsOff`` and ``cmConditionEvaluator::GetBooleanValue`` for
  :meth:`CMakeCache.get_bool`.

Every matched line is an entry, including INTERNAL ``<name>-ADVANCED``-style
property lines (CMake turns those into properties, but ``load_cache(... READ_WITH_PREFIX
...)`` reads them as values); a repeated name keeps the last value.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from buildkit.builder.build_state import CMAKE_CACHE
from buildkit.errors import BuildkitError

CACHE_FILE_NAME = CMAKE_CACHE
ENTRY_TYPES = ("BOOL", "PATH", "FILEPATH", "STRING", "INTERNAL", "STATIC", "UNINITIALIZED")

PythonValue = bool | str | None
StrPath = str | os.PathLike[str]

_VALUE = r"(.*[^\r\t ]|[\r\t ]*)[\r\t ]*\Z"
_ENTRY_PATTERNS = (  # (regex, has a type group), in cmState::ParseCacheEntry's order
    (re.compile(r'"([^"]*)":([^=]*)=' + _VALUE, re.S), True),
    (re.compile(r"([^=:]*):([^=]*)=" + _VALUE, re.S), True),
    (re.compile(r'"([^"]*)"=' + _VALUE, re.S), False),
    (re.compile(r"([^=]*)=" + _VALUE, re.S), False),
)
_LEADING_BLANKS = " \t\r\n"

_ON_WORDS = frozenset({"1", "Y", "ON", "YES", "TRUE"})
_OFF_WORDS = frozenset({"", "0", "N", "NO", "OFF", "FALSE", "IGNORE"})

# The subset of C's strtod() grammar that consumes a whole string: if() treats
# such an argument as a number before it looks for a variable of that name.
_STRTOD = re.compile(r"""[ \t\n\v\f\r]*[+-]?(?:
    (?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)
  | (?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | [iI][nN][fF](?:[iI][nN][iI][tT][yY])?
  | [nN][aA][nN](?:\([0-9A-Za-z_]*\))?
)\Z""", re.X)


class CMakeCacheError(BuildkitError):
    """A ``CMakeCache.txt`` line that CMake itself would reject."""

    def __init__(self, path: str, lineno: int, line: str):
        super().__init__(
            f"{path}:{lineno}: CMake cannot parse this cache line: {line!r} "
            "(an entry must look like NAME:TYPE=VALUE).",
            f"The cache was edited or damaged; delete {path} or set CMAKE_FRESH=1 "
            "to configure from scratch.")
        self.path = path
        self.lineno = lineno
        self.line = line


@dataclass(frozen=True)
class CacheEntry:
    """One cache line: ``type`` is one of :data:`ENTRY_TYPES`, or None when the line
    has no ``:TYPE`` (CMake then treats the entry as UNINITIALIZED)."""

    name: str
    type: str | None
    value: str


def is_cmake_on(value: str) -> bool:
    """CMake's true constants (``cmValue::IsOn``), ASCII case-insensitive."""
    return value.isascii() and value.upper() in _ON_WORDS


def is_cmake_notfound(value: str) -> bool:
    """``NOTFOUND`` or ``*-NOTFOUND``; unlike the other constants, case-sensitive."""
    return value == "NOTFOUND" or value.endswith("-NOTFOUND")


_CUDA_LANGUAGE = re.compile(r"\b(?:project|enable_language|check_language)\s*\([^)]*\bCUDA\b", re.I)


def project_uses_cuda(cache: CMakeCache | None, cmakelists: Path) -> bool:
    """Whether the project compiles CUDA: its cache found a CUDA compiler (or has
    USE_CUDA on); before any configure, whether its top-level CMakeLists.txt enables
    the CUDA language.  An nvcc that is merely installed says nothing."""
    if cache is not None:
        compiler = cache.get_value("CMAKE_CUDA_COMPILER")
        return (bool(compiler and not is_cmake_notfound(compiler))
                or ("USE_CUDA" in cache and cache.get_bool("USE_CUDA")))
    try:
        return _CUDA_LANGUAGE.search(cmakelists.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def is_cmake_off(value: str) -> bool:
    """CMake's false constants (``cmValue::IsOff``): what makes ``if(<variable>)`` false."""
    return (value.isascii() and value.upper() in _OFF_WORDS) or is_cmake_notfound(value)


def if_variable(name: str, value: str) -> bool:
    """What ``if(<name>)`` evaluates to where the variable ``name`` holds ``value``
    (:meth:`CMakeCache.get_bool`, which explains the rules)."""
    if is_cmake_on(name):
        return True
    if is_cmake_off(name):
        return False
    number = _strtod_truth(name)
    if number is not None:
        return number
    return not is_cmake_off(value)


def _strtod_truth(text: str) -> bool | None:
    """``bool(strtod(text))`` when strtod consumes all of ``text``, else None."""
    match = _STRTOD.match(text)
    if match is None:
        return None
    try:
        if match["hex"]:
            number = float.fromhex(text.strip(" \t\n\v\f\r"))
        elif match["dec"]:
            number = float(text.strip(" \t\n\v\f\r"))
        else:
            return True  # inf and nan both convert to true
    except OverflowError:
        return True  # strtod returns HUGE_VAL
    return number != 0.0


def parse_entry(line: str) -> CacheEntry | None:
    """Parse one ``NAME:TYPE=VALUE`` line like ``cmState::ParseCacheEntry``; None if invalid."""
    for pattern, typed in _ENTRY_PATTERNS:
        match = pattern.match(line)
        if match is None:
            continue
        name, value = match[1], match[3 if typed else 2]
        entry_type = None
        if typed:
            entry_type = match[2] if match[2] in ENTRY_TYPES else "STRING"
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1]
        return CacheEntry(name, entry_type, value)
    return None


def _c_line(raw: str) -> str:
    """What CMake sees of one line: no trailing CR, nothing past a NUL."""
    if raw.endswith("\r"):
        raw = raw[:-1]
    return raw.split("\0", 1)[0]


def _parse_lines(text: str, path: str) -> Iterator[CacheEntry]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline ends a line; it does not start one
    index = 0
    while index < len(lines):
        index += 1
        line = _c_line(lines[index - 1]).lstrip(_LEADING_BLANKS)
        if not line or line.startswith("#"):
            continue
        while line.startswith("//"):
            # Past the last line CMake's read fails and leaves an empty buffer.
            line = _c_line(lines[index]) if index < len(lines) else ""
            index += 1
        entry = parse_entry(line)
        if entry is None:
            raise CMakeCacheError(path, index, line)
        yield entry


def _cache_file(path: StrPath) -> Path:
    path = Path(path)
    return path / CACHE_FILE_NAME if path.is_dir() else path


class CMakeCache(Mapping[str, CacheEntry]):
    """A read-only view of a CMake cache: entry name -> :class:`CacheEntry`, in file order."""

    def __init__(self, entries: Iterable[CacheEntry] = (), path: str | None = None):
        self._entries: dict[str, CacheEntry] = {}
        for entry in entries:
            self._entries[entry.name] = entry
        self.path = path

    @classmethod
    def parse(cls, text: str, path: str = "<string>") -> CMakeCache:
        """Parse cache text; ``path`` only names the file in errors."""
        return cls(_parse_lines(text, path), path)

    @classmethod
    def read(cls, path: StrPath) -> CMakeCache:
        """Read ``path``, a ``CMakeCache.txt`` or a build directory holding one.

        Raises :class:`CMakeCacheError` for a line CMake would reject and
        ``FileNotFoundError`` when there is no cache.  Bytes that are not UTF-8
        survive as surrogate escapes, so nothing is lost.
        """
        file = _cache_file(path)
        text = file.read_bytes().decode("utf-8", "surrogateescape")
        return cls.parse(text, str(file))

    @classmethod
    def read_if_exists(cls, path: StrPath) -> CMakeCache | None:
        """Like :meth:`read`, but None when there is no cache file."""
        try:
            return cls.read(path)
        except FileNotFoundError:
            return None

    @classmethod
    def read_complete(cls, path: StrPath) -> CMakeCache | None:
        """Like :meth:`read_if_exists`, but a truncated file raises CacheTruncatedError."""
        return read_complete_cache(Path(path))

    def __getitem__(self, name: str) -> CacheEntry:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"CMakeCache(path={self.path!r}, {len(self)} entries)"

    def get_value(self, name: str, default: str | None = None) -> str | None:
        """The entry's value, or ``default`` when there is no such entry."""
        entry = self._entries.get(name)
        return default if entry is None else entry.value

    def get_bool(self, name: str) -> bool:
        """What ``if(<name>)`` evaluates to in CMake code that sees this cache.

        As in ``cmConditionEvaluator::GetBooleanValue``, a name that is itself a
        boolean constant or a number decides on its own; otherwise the value is
        true unless it is a false constant (:func:`is_cmake_off`).  So ``2``, ``0.0``
        and ``"TRUE "`` are true values, ``IGNORE`` and ``X-NOTFOUND`` false ones.
        Raises ``KeyError`` when there is no such entry.
        """
        return if_variable(name, self._entries[name].value)

    def as_pytorch_dict(self) -> dict[str, PythonValue]:
        """Entries as PyTorch's ``get_cmake_cache_variables`` returns them.

        INTERNAL and STATIC entries are dropped, BOOL values become ``bool`` (false
        exactly when CMake's ``if()`` says so), FILEPATH values that are NOTFOUND
        become None, everything else stays ``str``.
        """
        return {entry.name: _pytorch_value(entry) for entry in self._entries.values()
                if entry.type not in ("INTERNAL", "STATIC")}


def _pytorch_value(entry: CacheEntry) -> PythonValue:
    if entry.type == "BOOL":
        return not is_cmake_off(entry.value)
    if entry.type == "FILEPATH" and is_cmake_notfound(entry.value):
        return None
    return entry.value


class CacheTruncatedError(CMakeCacheError):
    """CMake ends every cache line with a line break: without one the file was cut off
    (a full disk, a crash), and its last value may be cut short yet still parse."""

    def __init__(self, path: str, lineno: int, line: str):
        super().__init__(path, lineno, line)
        self.message = f"{path} is truncated: its last line, {line!r}, has no line break."


def read_complete_cache(path: Path) -> CMakeCache | None:
    """Like CMakeCache.read_if_exists, but a truncated file is an error: a build tool
    must not configure from a value that was cut short."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if data and not data.endswith(b"\n"):
        lines = data.split(b"\n")
        raise CacheTruncatedError(str(path), len(lines), lines[-1].decode("utf-8", "replace"))
    return CMakeCache.parse(data.decode("utf-8", "surrogateescape"), str(path))


class _Unread(enum.Enum):
    UNREAD = 0  # CMakeCache.txt not read yet (None: read, and there is none)


_UNREAD: Final = _Unread.UNREAD


class BuildFolderCache:
    """A build folder's ``CMakeCache.txt``, read once until a configure changes it: the one
    reader of it that a command's driver and project share.

    A file CMake would not read back (cut off, or a line it cannot parse) raises from
    :meth:`entries`; :meth:`value` takes it for no value, so that the configure decision,
    which reads :meth:`entries`, is what says so and starts from scratch."""

    def __init__(self, build_dir: Path):
        self.path = Path(build_dir) / CACHE_FILE_NAME
        self._read: CMakeCache | _Unread | None = _UNREAD

    def entries(self) -> CMakeCache | None:
        """The parsed cache, None before the first configure."""
        if self._read is _UNREAD:
            self._read = read_complete_cache(self.path)
        return self._read

    def readable_entries(self) -> CMakeCache | None:
        """:meth:`entries`, or None where the file is damaged: for what is decided before the
        configure, whose decision names the damage and starts from scratch."""
        try:
            return self.entries()
        except CMakeCacheError:
            return None

    def value(self, name: str) -> str | None:
        """An entry's value; None without the entry, without a cache, or with a damaged one."""
        cache = self.readable_entries()
        return cache.get_value(name) if cache is not None else None

    def forget(self) -> None:
        """Read the file again next time: a configure (or ninja's regeneration) rewrote it."""
        self._read = _UNREAD
