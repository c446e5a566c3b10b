"""buildkit's wheel writer (buildkit.package.wheel_zip): read back by zipfile, the same bytes
for any number of threads, large members in pieces, ZIP64, no half-written wheel; and a
real wheel build that no longer copies the package tree on its way into the archive."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import random
import re
import stat
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit.errors import BuildkitError
from buildkit.package import wheel_zip
from buildkit.package.wheel_zip import DEFLATED, STORED, Member, wheel_members, write_wheel
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run

DIST_INFO = "demo-1.0.dist-info"
EPOCH = 1700000000  # 2023-11-14 22:13:20 UTC
CHUNK = 64 * 1024  # small pieces, so that a member of a few hundred KB is deflated in several


def make_tree(root: Path) -> Path:
    """A wheel's tree: modules, a header folder, an empty file, a non-ASCII name, an
    executable, one member several pieces long and the dist-info.  The long one repeats
    a 20 KB random block: deflate shrinks it only by matching the repeat before, which
    for the start of each piece lies in the piece before."""
    rng = random.Random(14)
    block = rng.randbytes(20_000)
    files = {
        "demo/__init__.py": b"from demo.core import answer\n",
        "demo/core.py": b"def answer():\n    return 42\n",
        "demo/empty.txt": b"",
        "demo/n\u00e4me.txt": "gr\u00fc\u00dfe\n".encode(),
        "demo/include/b.h": b"#pragma once\nint b(void);\n" * 20,
        "demo/include/a.h": b"#pragma once\nint a(void);\n" * 20,
        "demo/lib/weights.bin": b"".join(f"block {i}\n".encode() + block for i in range(25)),
        f"{DIST_INFO}/METADATA": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
        f"{DIST_INFO}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{DIST_INFO}/licenses/LICENSE": b"Do what you like.\n",
        f"{DIST_INFO}/RECORD": b"stale,,\n",  # left out: the writer makes its own
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "demo" / "core.py").chmod(0o755)
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "tree")


def pack(tree: Path, wheel: Path, **options) -> bytes:
    options = {"epoch": EPOCH, "chunk_size": CHUNK, **options}
    write_wheel(wheel, wheel_members(tree, DIST_INFO), DIST_INFO, **options)
    return wheel.read_bytes()


def test_members_read_back_with_their_contents_modes_dates_and_record(tree: Path, tmp_path: Path) -> None:
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    pack(tree, wheel, threads=3)
    with zipfile.ZipFile(wheel) as archive:
        assert archive.testzip() is None  # every CRC-32 checks out
        infos = archive.infolist()
        names = [info.filename for info in infos]
        record = archive.read(f"{DIST_INFO}/RECORD").decode()
        contents = {info.filename: archive.read(info) for info in infos}
    assert names == ["demo/__init__.py", "demo/core.py", "demo/empty.txt", "demo/n\u00e4me.txt",
                     "demo/include/a.h", "demo/include/b.h", "demo/lib/weights.bin",
                     f"{DIST_INFO}/METADATA", f"{DIST_INFO}/WHEEL", f"{DIST_INFO}/licenses/LICENSE",
                     f"{DIST_INFO}/RECORD"]
    for info in infos[:-1]:
        source = tree / info.filename
        assert contents[info.filename] == source.read_bytes(), info.filename
        assert info.external_attr >> 16 == source.stat().st_mode, info.filename
        assert info.compress_type == zipfile.ZIP_DEFLATED
    assert stat.S_IMODE(infos[1].external_attr >> 16) == 0o755
    assert {info.date_time for info in infos} == {(2023, 11, 14, 22, 13, 20)}
    rows = list(csv.reader(io.StringIO(record)))
    assert rows[-1] == [f"{DIST_INFO}/RECORD", "", ""]
    for name, digest, size in rows[:-1]:
        data = contents[name]
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (f"sha256={expected}", len(data)), name
    assert [row[0] for row in rows] == names


def test_the_bytes_depend_on_the_files_only_not_on_threads_or_the_run(tree: Path, tmp_path: Path) -> None:
    wheels = [pack(tree, tmp_path / f"run{run}.whl", threads=threads) for run, threads in enumerate((1, 4, 4, 2))]
    assert len(set(wheels)) == 1
    # Without an epoch, each member is dated by its file (RECORD by the newest): still the same bytes.
    undated = [pack(tree, tmp_path / f"undated-{threads}.whl", threads=threads, epoch=None) for threads in (1, 3)]
    assert undated[0] == undated[1] != wheels[0]
    os.utime(tree / "demo" / "core.py", (1_600_000_000, 1_600_000_000))
    with zipfile.ZipFile(io.BytesIO(pack(tree, tmp_path / "redated.whl", threads=2, epoch=None))) as archive:
        assert archive.getinfo("demo/core.py").date_time == (2020, 9, 13, 12, 26, 40)


@pytest.mark.parametrize("method", [DEFLATED, STORED])
def test_a_member_of_many_pieces_is_one_member_as_small_as_zipfiles(method: int, tree: Path, tmp_path: Path) -> None:
    big = tree / "demo" / "lib" / "weights.bin"
    assert big.stat().st_size > 5 * CHUNK
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    pack(tree, wheel, threads=4, method=method)
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("demo/lib/weights.bin")
        assert archive.read(info) == big.read_bytes()
        assert info.compress_type == method
    reference = tmp_path / "reference.zip"
    with zipfile.ZipFile(reference, "w", method) as archive:
        archive.write(big, "weights.bin")
    with zipfile.ZipFile(reference) as archive:
        single = archive.getinfo("weights.bin").compress_size
    # Each piece starts from the 32 KiB before it: splitting costs almost nothing.
    assert info.compress_size <= single * 1.01 + 16


def test_forced_zip64_records_are_read_back(tree: Path, tmp_path: Path) -> None:
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    data = pack(tree, wheel, threads=2, force_zip64=True)
    assert b"PK\x06\x06" in data[-200:] and b"PK\x06\x07" in data[-100:]  # ZIP64 end record and locator
    with zipfile.ZipFile(wheel) as archive:
        assert archive.testzip() is None
        for info in archive.infolist():
            assert info.extra[:2] == b"\x01\x00", info.filename  # the ZIP64 extra field
            assert archive.read(info) == (tree / info.filename).read_bytes() or info.filename.endswith("RECORD")
    assert pack(tree, tmp_path / "again.whl", threads=1, force_zip64=True) == data


def test_an_interrupted_write_leaves_no_wheel_and_keeps_the_old_one(tree: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = tmp_path / "out" / "demo-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"the previous wheel")
    taken = 0
    real_take = wheel_zip._Writer._take

    def take_then_stop(self, task, result) -> None:
        nonlocal taken
        taken += 1
        if taken == 3:
            raise KeyboardInterrupt
        real_take(self, task, result)

    monkeypatch.setattr(wheel_zip._Writer, "_take", take_then_stop)
    with pytest.raises(KeyboardInterrupt):
        pack(tree, wheel, threads=2)
    assert taken == 3
    assert [p.name for p in wheel.parent.iterdir()] == [wheel.name] and wheel.read_bytes() == b"the previous wheel"


def test_a_file_gone_or_changed_while_packing_is_a_clear_error(tree: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    members = wheel_members(tree, DIST_INFO)
    (tree / "demo" / "core.py").unlink()
    with pytest.raises(BuildkitError, match=r"Could not read .*core\.py to pack it into the wheel"):
        write_wheel(wheel, members, DIST_INFO)
    (tree / "demo" / "core.py").write_text("def answer():\n    return 42\n")
    real_pack = wheel_zip._Writer.pack

    def pack_after_a_change(self, entries, threads) -> None:  # between the listing and the reading
        (tree / "demo" / "core.py").write_text("grown after it was listed\n")
        real_pack(self, entries, threads)

    monkeypatch.setattr(wheel_zip._Writer, "pack", pack_after_a_change)
    with pytest.raises(BuildkitError, match=r"core\.py changed size while it was being packed"):
        write_wheel(wheel, members, DIST_INFO, threads=2)
    assert list(tmp_path.iterdir()) == [tree]


def test_members_by_reference_join_the_tree_which_wins_a_clash(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "staged.h"
    outside.write_text("#pragma once\n")
    clash = tmp_path / "other_core.py"
    clash.write_text("not the tree's\n")
    members = wheel_members(tree, DIST_INFO, [Member("demo/include/aa.h", outside, add_mode=stat.S_IWRITE),
                                              Member("demo/core.py", clash)])
    by_name = {member.name: member for member in members}
    assert by_name["demo/core.py"].source == tree / "demo" / "core.py"
    assert [m.name for m in members].index("demo/include/aa.h") == [m.name for m in members].index(
        "demo/include/a.h") + 1
    outside.chmod(0o444)
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    write_wheel(wheel, members, DIST_INFO, epoch=EPOCH)
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("demo/include/aa.h") == b"#pragma once\n"
        assert stat.S_IMODE(archive.getinfo("demo/include/aa.h").external_attr >> 16) == 0o644
    for name in ("../escape.h", "/etc/escape.h", "demo//escape.h"):
        with pytest.raises(BuildkitError, match="is not a relative path inside the wheel"):
            write_wheel(wheel, [*members, Member(name, outside)], DIST_INFO)


# ---------------------------------------------------------------- a real build

@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds a shared library with gcc")
def test_a_real_wheel_build_copies_no_installed_file(test_package, tmp_path: Path) -> None:
    """tests/packages/installed_files through the PEP 517 hook: what CMake installed goes
    from the staging tree into the archive; the only copies are the Python modules', once."""
    project = test_package("installed_files")
    dist = tmp_path / "dist"
    code = f"import buildkit.build_meta as backend; backend.build_wheel({str(dist)!r})"
    output = run([sys.executable, "-c", code], cwd=project, env=clean_env(CI="true", MAX_JOBS="2"))
    text = output.stdout + output.stderr
    copied = re.findall(r"^copying (\S+) -> ", text, re.MULTILINE)
    assert copied and all(path.endswith(".py") for path in copied), copied
    assert len(copied) == len(set(Path(path).name for path in copied)), copied  # each module once
    wheel = only_wheel(dist)
    assert re.search(rf"packed {re.escape(wheel.name)}: \d+ files, [\d.]+ MB into [\d.]+ MB in [\d.]+ s "
                     r"\([\d,]+ MB/s, 2 threads\)", text), text[-3000:]
    staged = build_folder(project) / "wheel-staging"
    with zipfile.ZipFile(wheel) as archive:
        for name in ("instfiles/libplain.so", "instfiles/generated.txt", "instfiles/data/x.txt"):
            assert archive.read(name) == (staged / name).read_bytes(), name
    assert not [p for p in project.joinpath("build").glob("lib*/**/*") if p.name in ("libplain.so", "x.txt")]
