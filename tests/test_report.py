"""``buildkit report``: .ninja_log parsing, lanes, the Chrome trace, and a real build."""

from __future__ import annotations

import json
import subprocess

import pytest

from buildkit.builder.toolchain import tools as toolchain
from buildkit.errors import BuildkitError
from buildkit.frontends.cli import report


def test_keeps_only_the_last_build(tmp_path):
    log = tmp_path / ".ninja_log"
    log.write_text("# ninja log v5\n"
                   "10\t900\t1\told.o\taa\n0\t1000\t1\ta.o\tbb\n"  # first build
                   # Second build: end times go back down.  Entries come in order of
                   # completion, so within it start times may go down (a.o started first).
                   "5\t200\t1\tb.o\tcc\n0\t300\t1\ta.o\tbb\n")
    entries = report.read_ninja_log(log)
    assert [(e.output, e.start_ms, e.end_ms) for e in entries] == [("a.o", 0, 300), ("b.o", 5, 200)]


@pytest.mark.parametrize("version", [5, 6, 7])
def test_formats_and_duplicates(tmp_path, version):
    log = tmp_path / ".ninja_log"
    log.write_text(f"# ninja log v{version}\n"
                   "0\t100\t1\tx.o\tabc\n"
                   "0\t250\t2\tgen.h\tdef\n0\t250\t2\tgen.cpp\tdef\n"  # one job, two outputs
                   "120\t400\t3\tx.o\t123\n"  # x.o rebuilt later in the same build: keep the last
                   "truncated line\n")
    entries = report.read_ninja_log(log)
    assert {e.output for e in entries} == {"x.o", "gen.h", "gen.cpp"}
    assert [e.start_ms for e in entries if e.output == "x.o"] == [120]
    assert len(report.jobs(entries)) == 2
    assert [e.output for e in report.slowest_units(entries)] == ["x.o"]


def test_lanes_never_overlap():
    entries = [report.LogEntry(s, e, f"t{i}.o", str(i)) for i, (s, e) in
               enumerate([(0, 100), (10, 50), (50, 120), (60, 70), (100, 200), (130, 140)])]
    placed = report.assign_lanes(entries)
    by_lane: dict[int, list[report.LogEntry]] = {}
    for entry, lane in placed:
        by_lane.setdefault(lane, []).append(entry)
    for jobs in by_lane.values():
        for a, b in zip(jobs, jobs[1:]):
            assert a.end_ms <= b.start_ms
    assert len(by_lane) == 3  # at most three jobs run at once here


def test_chrome_trace_shape():
    trace = report.chrome_trace([report.LogEntry(5, 30, "a.o", "1"), report.LogEntry(10, 20, "b.o", "2")])
    assert trace["traceEvents"] == [
        {"name": "a.o", "cat": "build", "ph": "X", "ts": 5000, "dur": 25000, "pid": 0, "tid": 0},
        {"name": "b.o", "cat": "build", "ph": "X", "ts": 10000, "dur": 10000, "pid": 0, "tid": 1},
    ]


def test_missing_or_foreign_log(tmp_path, capsys):
    assert report.main([str(tmp_path)]) == 1
    assert "No Ninja log" in capsys.readouterr().err
    (tmp_path / ".ninja_log").write_text("not a log\n")
    with pytest.raises(BuildkitError, match="not a Ninja log"):
        report.read_ninja_log(tmp_path / ".ninja_log")


@pytest.mark.slow
def test_report_on_a_real_build(tmp_path, capsys, test_package):
    source = test_package("hello")
    build = tmp_path / "build"
    cmake, ninja = toolchain.find_cmake("3.24"), toolchain.find_ninja()
    subprocess.run([str(cmake.path), "-S", source, "-B", build, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja.path}"],
                   check=True, capture_output=True)
    subprocess.run([str(ninja.path), "-C", build], check=True, capture_output=True)

    assert report.main([str(build), "--top", "5"]) == 0
    out = capsys.readouterr().err
    assert "Slowest translation units" in out and "greet.cpp.o" in out and "main.cpp.o" in out
    trace = json.loads((build / ".buildkit" / "build-trace.json").read_text())
    names = {event["name"] for event in trace["traceEvents"]}
    assert {"CMakeFiles/greet.dir/src/greet.cpp.o", "libgreet.so", "hello"} <= names
    assert all(event["ph"] == "X" and event["dur"] >= 0 for event in trace["traceEvents"])

    assert report.main([str(build), "-o", str(tmp_path / "t.json")]) == 0
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
