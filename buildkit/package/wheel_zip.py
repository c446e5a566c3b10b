"""The wheel archive: members deflated in parallel, the same bytes for any number of threads.

Python's zipfile compresses each member in the thread that writes it and cannot be
handed a member that is already compressed, so a wheel of hundreds of MB is packed on
one core.  This writer deflates on a thread pool (zlib releases the GIL) and writes
in archive order from the main thread:

* members up to ``chunk_size`` are read, hashed and deflated whole by one worker,
  several to a task; each is the raw deflate stream zipfile itself would write
  (``zlib.compressobj(level, DEFLATED, -15)``, then ``flush()``);
* a larger member is deflated in ``chunk_size`` pieces: each piece is its own raw
  deflate stream primed with the 32 KiB before it (``zdict``) and ended with a sync
  flush (byte-aligned, not final), the last one with ``Z_FINISH``, so that the
  pieces concatenate into one valid stream.  The main thread hashes the pieces in
  order (SHA-256 for RECORD and CRC-32 for the zip) while the workers deflate the
  next ones; what is read ahead of the writing is bounded (a few tasks per thread, or
  up to 32 MiB of small ones and pieces), so memory does not grow with the member;
* a member's bytes depend on its content, ``level`` and ``chunk_size`` only: how the
  work is spread over threads changes nothing;
* ZIP64 fields appear where a size, an offset or the member count needs them (or
  everywhere, with ``force_zip64``, which is how the tests reach that code cheaply).

:func:`write_wheel` adds RECORD (sha256 and size of every member), orders the
members as ``wheel``'s WheelFile walks a tree (sorted, a folder's files before its
subfolders) with the ``.dist-info`` folder last and RECORD at the very end, dates
every member by its file's mtime or, when given, SOURCE_DATE_EPOCH (as WheelFile
does), and writes under a temporary name renamed into place: an interrupted write
leaves no half-written wheel.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import io
import os
import stat
import struct
import sys
import time
import zlib
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from buildkit.errors import BuildkitError

STORED, DEFLATED = 0, 8  # the zip method numbers (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
# wheel's WheelFile (what setuptools' bdist_wheel writes with) gives zipfile no level:
# zipfile then deflates at zlib's default, level 6.  The same here, so wheels keep their size.
DEFAULT_LEVEL = zlib.Z_DEFAULT_COMPRESSION
CHUNK_SIZE = 1 << 20  # larger members are deflated in pieces of this size
BATCH_BYTES, BATCH_FILES = 1 << 20, 256  # small members go to a worker several at a time
AHEAD_BYTES = 32 << 20  # read (and deflated) ahead of the writing, at most, besides a few tasks per thread
WINDOW = 32 * 1024  # deflate's window: the history a piece's compressor is primed with
ZIP64_LIMIT = (1 << 31) - 1  # zipfile's own threshold: some readers take these fields as signed
COUNT_LIMIT = 0xFFFF
FIRST_DOS_SECOND, LAST_DOS_SECOND = 315532800, 4354819198  # 1980-01-01 and 2107-12-31 23:59:58 UTC
UNIX = 0 if sys.platform == "win32" else 3  # "made by" system, as zipfile writes it

_LOCAL = struct.Struct("<IHHHHHIIIHH")
_CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
_END = struct.Struct("<IHHHHIIH")
_END64 = struct.Struct("<IQHHIIQQQQ")
_LOCATOR64 = struct.Struct("<IIQI")

# A worker call: the function, then its arguments (_pack_whole: a batch; _pack_piece: one piece).
_Task = tuple[Any, ...]


@dataclass(frozen=True)
class Member:
    """A file to pack: ``name`` is its path in the archive, ``add_mode`` permission bits
    set on top of the file's own (setuptools makes the package data it copies writable)."""

    name: str
    source: str | Path
    add_mode: int = 0


@dataclass(frozen=True)
class PackStats:
    members: int
    bytes_in: int
    bytes_out: int
    seconds: float
    threads: int

    def describe(self) -> str:
        rate = self.bytes_in / 1e6 / max(self.seconds, 1e-6)
        return (f"{self.members:,} files, {self.bytes_in / 1e6:,.1f} MB into {self.bytes_out / 1e6:,.1f} MB "
                f"in {self.seconds:.2f} s ({rate:,.0f} MB/s, {self.threads} threads)")


@dataclass(frozen=True)
class _Entry:
    name: bytes
    flags: int
    source: str | Path
    size: int
    mode: int
    dos: tuple[int, int]  # time, date
    zip64: bool  # in the local header: decided before the data is written


@dataclass
class _Done:
    entry: _Entry
    offset: int
    crc: int = 0
    compressed: int = 0
    digest: bytes = b""


def wheel_members(root: Path, dist_info: str, by_reference: Sequence[Member] = ()) -> list[Member]:
    """Every file under ``root`` (symlinks to files followed, folders not, as WheelFile) and
    the members packed from where they lie, in wheel order; RECORD under ``root`` is left
    out (it is written anew).  A file in the tree wins over a member by reference of the
    same name, as setuptools' build_py keeps a module over package data of the same path."""
    found = {member.name: member for member in by_reference}
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for file in files:
            path = Path(folder, file)
            name = path.relative_to(root).as_posix()
            if path.is_file() and name != f"{dist_info}/RECORD":
                found[name] = Member(name, path)
    return [found[name] for name in sorted(found, key=lambda name: _wheel_order(name, dist_info))]


def _wheel_order(name: str, dist_info: str) -> tuple[bool, tuple[tuple[int, str], ...]]:
    *folders, file = name.split("/")
    walk = (*((1, folder) for folder in folders), (0, file))  # a folder's files before its subfolders
    return name.startswith(f"{dist_info}/"), walk


def write_wheel(path: Path, members: Sequence[Member], dist_info: str, *, epoch: int | None = None,
                threads: int = 1, method: int = DEFLATED, level: int = DEFAULT_LEVEL, chunk_size: int = CHUNK_SIZE,
                force_zip64: bool = False) -> PackStats:
    """Write ``members`` then ``<dist_info>/RECORD`` to ``path`` (through a temporary name)."""
    if method not in (STORED, DEFLATED) or chunk_size < WINDOW or threads < 1:
        raise ValueError(f"write_wheel: method {method}, chunk size {chunk_size}, {threads} threads")
    started = time.perf_counter()
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with open(part, "wb") as out:
            writer = _Writer(out, method, level, chunk_size, force_zip64)
            writer.pack([writer.entry(m, epoch) for m in members], threads)
            record = _record(writer.done, f"{dist_info}/RECORD")
            # WheelFile dates RECORD now; the newest member's date keeps two builds of the same files equal.
            newest = max((done.entry.dos for done in writer.done), key=lambda dos: (dos[1], dos[0]),
                         default=_dos_time(FIRST_DOS_SECOND))
            writer.write_bytes(f"{dist_info}/RECORD", record, stat.S_IFREG | 0o664,
                               _dos_time(epoch) if epoch is not None else newest)
            writer.finish()
        os.replace(part, path)
    except BaseException:
        with contextlib.suppress(OSError):  # the error that got here is the one to report
            part.unlink(missing_ok=True)
        raise
    return PackStats(len(writer.done), sum(d.entry.size for d in writer.done), writer.position,
                     time.perf_counter() - started, threads)


def _record(done: Sequence[_Done], record_name: str) -> bytes:
    text = io.StringIO()
    rows = csv.writer(text, delimiter=",", quotechar='"', lineterminator="\n")
    for item in done:
        digest = base64.urlsafe_b64encode(item.digest).rstrip(b"=").decode("ascii")
        rows.writerow((item.entry.name.decode("utf-8"), f"sha256={digest}", item.entry.size))
    rows.writerow((record_name, "", ""))
    return text.getvalue().encode("utf-8")


def _dos_time(seconds: float) -> tuple[int, int]:
    year, month, day, hour, minute, second = time.gmtime(
        min(max(int(seconds), FIRST_DOS_SECOND), LAST_DOS_SECOND))[:6]
    return hour << 11 | minute << 5 | second // 2, (year - 1980) << 9 | month << 5 | day


def _encoded(name: str) -> tuple[bytes, int]:
    """The name's bytes and flags as zipfile writes them: ASCII plain, otherwise UTF-8 with bit 11."""
    try:
        return name.encode("ascii"), 0
    except UnicodeEncodeError:
        return name.encode("utf-8"), 0x800


class _Writer:
    def __init__(self, out: BinaryIO, method: int, level: int, chunk_size: int, force_zip64: bool):
        self.out, self.method, self.level, self.chunk_size = out, method, level, chunk_size
        self.force_zip64 = force_zip64
        self.position = 0
        self.done: list[_Done] = []
        self._hash = hashlib.sha256()  # of the large member being written, piece by piece

    def entry(self, member: Member, epoch: int | None) -> _Entry:
        parts = member.name.split("/")
        if member.name.startswith("/") or ".." in parts or "" in parts or "\\" in member.name:
            raise BuildkitError(f"The wheel member name {member.name!r} (from {member.source}) is not a relative "
                                "path inside the wheel.", "This is a bug in buildkit's wheel build: please report it.")
        try:
            info = os.stat(member.source)
        except OSError as error:
            raise _unreadable(member.source, error) from None
        name, flags = _encoded(member.name)
        # zipfile's rule: sizes within 5% of the limit get the ZIP64 fields (deflate may grow data).
        zip64 = self.force_zip64 or info.st_size * 1.05 > ZIP64_LIMIT
        return _Entry(name, flags, member.source, info.st_size, info.st_mode | member.add_mode,
                      _dos_time(info.st_mtime if epoch is None else epoch), zip64)

    # ------------------------------------------------------------ the pipeline
    def pack(self, entries: Sequence[_Entry], threads: int) -> None:
        """Deflate on ``threads`` workers, write in order here.  In flight: a few tasks per
        worker, and more while they hold little data (up to ``AHEAD_BYTES``), so that the
        workers deflate a large member's first pieces while this thread is still writing the
        thousands of small members before it (a package's headers sort before its lib/)."""
        pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="wheel-zip")
        try:
            tasks = self._tasks(entries)
            flight: deque[tuple[_Task, Future[Any], int]] = deque()
            ahead = 0
            while True:
                while (len(flight) < 3 * threads or ahead < AHEAD_BYTES) and (task := next(tasks, None)) is not None:
                    size = _task_bytes(task)
                    flight.append((task, pool.submit(*task), size))
                    ahead += size
                if not flight:
                    break
                task, future, size = flight.popleft()
                ahead -= size
                self._take(task, future.result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _tasks(self, entries: Sequence[_Entry]) -> Iterator[_Task]:
        batch: list[_Entry] = []
        batch_bytes = 0
        for entry in entries:
            if entry.size > self.chunk_size:
                if batch:
                    yield (_pack_whole, batch, self.method, self.level)
                    batch, batch_bytes = [], 0
                for start in range(0, entry.size, self.chunk_size):
                    yield (_pack_piece, entry, start, self.chunk_size, self.method, self.level)
                continue
            batch.append(entry)
            batch_bytes += entry.size
            if batch_bytes >= BATCH_BYTES or len(batch) >= BATCH_FILES:
                yield (_pack_whole, batch, self.method, self.level)
                batch, batch_bytes = [], 0
        if batch:
            yield (_pack_whole, batch, self.method, self.level)

    def _take(self, task: _Task, result: Any) -> None:
        if task[0] is _pack_whole:
            for entry, packed in zip(task[1], result, strict=True):
                self.add_whole(entry, *packed)
            return
        entry, start = task[1], task[2]
        raw, data = result
        if start == 0:
            self.done.append(_Done(entry, self.position))
            self._write(self._local_header(self.done[-1]))
            self._hash = hashlib.sha256()
        done = self.done[-1]
        self._hash.update(raw)
        done.crc = zlib.crc32(raw, done.crc)
        done.compressed += len(data)
        self._write(data)
        if start + self.chunk_size >= entry.size:  # the last piece: now the header can be completed
            done.digest = self._hash.digest()
            self.out.seek(done.offset)
            self.out.write(self._local_header(done))
            self.out.seek(self.position)

    def add_whole(self, entry: _Entry, packed: bytes, crc: int, digest: bytes) -> None:
        """One member whose data is all here: its header, then its data.  (A member at a
        time: tests/test_faults.py pauses a wheel build here, mid-archive.)"""
        done = _Done(entry, self.position, crc, len(packed), digest)
        self._write(self._local_header(done))
        self._write(packed)
        self.done.append(done)

    def write_bytes(self, name: str, data: bytes, mode: int, dos: tuple[int, int]) -> None:
        """A member made here (RECORD), not read from a file."""
        encoded, flags = _encoded(name)
        entry = _Entry(encoded, flags, Path(), len(data), mode, dos, self.force_zip64)
        self.add_whole(entry, *_pack_bytes(data, self.method, self.level))

    def _write(self, data: bytes) -> None:
        self.out.write(data)
        self.position += len(data)

    # --------------------------------------------------------------- records
    def _local_header(self, done: _Done) -> bytes:
        entry = done.entry
        extra = struct.pack("<HHQQ", 1, 16, entry.size, done.compressed) if entry.zip64 else b""
        sizes = (0xFFFFFFFF, 0xFFFFFFFF) if entry.zip64 else (done.compressed, entry.size)
        return _LOCAL.pack(0x04034B50, 45 if entry.zip64 else 20, entry.flags, self.method, *entry.dos, done.crc,
                           *sizes, len(entry.name), len(extra)) + entry.name + extra

    def _central_header(self, done: _Done) -> bytes:
        entry = done.entry
        values = [entry.size, done.compressed, done.offset]
        wide = [self.force_zip64 or value > ZIP64_LIMIT for value in values]
        extra_values = [value for value, big in zip(values, wide, strict=True) if big]
        extra = b""
        if extra_values:  # the ZIP64 field: the values too large for their own fields, in this order
            extra = struct.pack(f"<HH{len(extra_values)}Q", 1, 8 * len(extra_values), *extra_values)
        usize, csize, offset = (0xFFFFFFFF if big else value for value, big in zip(values, wide, strict=True))
        version = 45 if extra or entry.zip64 else 20
        return _CENTRAL.pack(0x02014B50, UNIX << 8 | version, version, entry.flags, self.method, *entry.dos,
                             done.crc, csize, usize, len(entry.name), len(extra), 0, 0, 0, entry.mode << 16,
                             offset) + entry.name + extra

    def finish(self) -> None:
        """The central directory and the end records (ZIP64 ones where needed)."""
        start = self.position
        self._write(b"".join(self._central_header(done) for done in self.done))
        count, size = len(self.done), self.position - start
        if self.force_zip64 or count > COUNT_LIMIT or size > ZIP64_LIMIT or start > ZIP64_LIMIT:
            end64 = self.position
            self._write(_END64.pack(0x06064B50, _END64.size - 12, UNIX << 8 | 45, 45, 0, 0, count, count, size, start))
            self._write(_LOCATOR64.pack(0x07064B50, 0, end64, 1))
        self._write(_END.pack(0x06054B50, 0, 0, min(count, COUNT_LIMIT), min(count, COUNT_LIMIT),
                              min(size, 0xFFFFFFFF), min(start, 0xFFFFFFFF), 0))


# ------------------------------------------------------------------ the workers

def _task_bytes(task: _Task) -> int:
    """The data a task holds once done, about: what it reads (its output is no larger)."""
    if task[0] is _pack_whole:
        return sum(entry.size for entry in task[1])
    chunk_size: int = task[3]  # a piece
    return chunk_size


def _pack_whole(batch: Sequence[_Entry], method: int, level: int) -> list[tuple[bytes, int, bytes]]:
    """Small members, each read, hashed and deflated at once."""
    return [_pack_bytes(_read(entry, 0, entry.size), method, level) for entry in batch]


def _pack_bytes(data: bytes, method: int, level: int) -> tuple[bytes, int, bytes]:
    if method == DEFLATED:
        compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
        packed = compressor.compress(data) + compressor.flush()
    else:
        packed = data
    return packed, zlib.crc32(data), hashlib.sha256(data).digest()


def _pack_piece(entry: _Entry, start: int, chunk_size: int, method: int,
                level: int) -> tuple[memoryview, memoryview | bytes]:
    """One piece of a large member: its raw bytes (hashed in order by the writer) and its deflate stream."""
    primed = min(start, WINDOW) if method == DEFLATED else 0
    end = min(entry.size, start + chunk_size)
    data = _read(entry, start - primed, end - start + primed)
    raw = memoryview(data)[primed:]
    if method == STORED:
        return raw, raw
    if primed:
        compressor = zlib.compressobj(level, zlib.DEFLATED, -15, zdict=data[:primed])
    else:
        compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return raw, compressor.compress(raw) + compressor.flush(zlib.Z_FINISH if end == entry.size else zlib.Z_SYNC_FLUSH)


def _read(entry: _Entry, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset``; the file must still have the size it had when listed
    (its header may already be written, and RECORD must describe what was packed)."""
    try:  # os-level calls: a wheel of 8,000 headers reads each one, and a file object costs more than the read
        descriptor = os.open(entry.source, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            size = os.fstat(descriptor).st_size
            if hasattr(os, "pread"):
                data = os.pread(descriptor, length, offset)
            else:  # Windows
                os.lseek(descriptor, offset, os.SEEK_SET)
                data = os.read(descriptor, length)
        finally:
            os.close(descriptor)
    except OSError as error:
        raise _unreadable(entry.source, error) from None
    if size != entry.size or len(data) != length:
        raise BuildkitError(f"{entry.source} changed size while it was being packed into the wheel.",
                            "Something else is writing to the build's files: let it finish, then build the "
                            "wheel again.")
    return data


def _unreadable(source: str | Path, error: OSError) -> BuildkitError:
    return BuildkitError(f"Could not read {source} to pack it into the wheel: {error.strerror or error}.",
                         "Check that the file exists and is readable, then build the wheel again.")
