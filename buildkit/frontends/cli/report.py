"""``buildkit report [BUILD_DIR]``: where did the last build's time go?

Reads Ninja's ``.ninja_log``, lists the slowest translation units and writes a
Chrome trace (open it in ``chrome://tracing`` or https://ui.perfetto.dev) with one
lane per concurrently running job.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildkit._util import console
from buildkit.builder.build_state import BUILD_TRACE, NINJA_LOG, TORCH_PROJECT, state_path
from buildkit.config.drop_in import tool_settings
from buildkit.config.options import option_keys
from buildkit.errors import BuildkitError, exit_on_error

OBJECT_SUFFIXES = (".o", ".obj")


@dataclass(frozen=True)
class LogEntry:
    start_ms: int
    end_ms: int
    output: str
    command_hash: str

    @property
    def seconds(self) -> float:
        return (self.end_ms - self.start_ms) / 1000


def read_ninja_log(path: Path) -> list[LogEntry]:
    """The last build's entries (v5, v6 and v7 logs share the five tab-separated columns)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise BuildkitError(f"No Ninja log at {path}.",
                            "Build the project with the Ninja generator first (buildkit's default).") from None
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# ninja log v"):
        raise BuildkitError(f"{path} is not a Ninja log (its first line is not `# ninja log vN`).")
    return last_build(_parse(lines[1:]))


def _parse(lines: Sequence[str]) -> list[LogEntry]:
    entries = []
    for line in lines:
        fields = line.split("\t")
        if len(fields) != 5 or not fields[0].isdigit() or not fields[1].isdigit():
            continue  # a line cut short by an interrupted build
        entries.append(LogEntry(int(fields[0]), int(fields[1]), fields[3], fields[4]))
    return entries


def last_build(entries: Sequence[LogEntry]) -> list[LogEntry]:
    """Keep only the last build's entries, one per output.

    Ninja appends an entry when a job *finishes*, with times relative to the start of
    that build, so within one build the end times never decrease; an end time going
    back down means a new build started.  (Start times do go down within a build: a
    long job started early finishes after short ones started later.)
    """
    current: dict[str, LogEntry] = {}
    last_end = -1
    for entry in entries:
        if entry.end_ms < last_end:
            current = {}
        last_end = entry.end_ms
        current[entry.output] = entry  # a rebuilt output keeps its latest run
    return sorted(current.values(), key=lambda e: (e.start_ms, e.output))


def jobs(entries: Sequence[LogEntry]) -> list[LogEntry]:
    """One entry per job: a job with several outputs is logged once per output."""
    seen: dict[tuple[int, int, str], LogEntry] = {}
    for entry in entries:
        seen.setdefault((entry.start_ms, entry.end_ms, entry.command_hash), entry)
    return list(seen.values())


def slowest_units(entries: Sequence[LogEntry], count: int = 20) -> list[LogEntry]:
    units = [e for e in entries if e.output.endswith(OBJECT_SUFFIXES)]
    return sorted(units, key=lambda e: (-(e.end_ms - e.start_ms), e.output))[:count]


def assign_lanes(entries: Sequence[LogEntry]) -> list[tuple[LogEntry, int]]:
    """Give each job the lowest lane free at its start, so overlapping jobs never share one."""
    lane_ends: list[int] = []
    placed = []
    for entry in sorted(entries, key=lambda e: (e.start_ms, e.end_ms)):
        lane = next((i for i, end in enumerate(lane_ends) if end <= entry.start_ms), len(lane_ends))
        if lane == len(lane_ends):
            lane_ends.append(entry.end_ms)
        else:
            lane_ends[lane] = entry.end_ms
        placed.append((entry, lane))
    return placed


def chrome_trace(entries: Sequence[LogEntry]) -> dict[str, Any]:
    events = [{"name": entry.output, "cat": "build", "ph": "X", "ts": entry.start_ms * 1000,
               "dur": (entry.end_ms - entry.start_ms) * 1000, "pid": 0, "tid": lane}
              for entry, lane in assign_lanes(jobs(entries))]
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_trace(entries: Sequence[LogEntry], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(chrome_trace(entries), separators=(",", ":")), encoding="utf-8")
    return path


def default_build_dir() -> Path:
    """The project's build folder when run inside a project, else ./build."""
    try:
        return tool_settings(Path.cwd(), option_keys(), TORCH_PROJECT).build_dir
    except BuildkitError:
        return Path("build")


def report(build_dir: Path, output: Path | None = None, top: int = 20) -> Path:
    entries = read_ninja_log(build_dir / NINJA_LOG)
    if not entries:
        raise BuildkitError(f"{build_dir / '.ninja_log'} has no finished jobs.",
                            "Build the project, then run this again.")
    all_jobs = jobs(entries)
    wall = (max(e.end_ms for e in all_jobs) - min(e.start_ms for e in all_jobs)) / 1000
    busy = sum(e.seconds for e in all_jobs)
    units = slowest_units(all_jobs, top)
    console.info(f"last build: {len(all_jobs)} jobs, {wall:.1f} s wall clock, {busy:.1f} s of work")
    if units:
        console.print_table("Slowest translation units", ("seconds", "object"),
                            [(f"{e.seconds:.2f}", e.output) for e in units])
    path = write_trace(entries, output or Path(state_path(build_dir, BUILD_TRACE)))
    console.info(f"trace written to {path} (open it in chrome://tracing or https://ui.perfetto.dev)")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="buildkit report",
                                     description="Show the slowest translation units of the last build "
                                                 "and write a Chrome trace of it.")
    parser.add_argument("build_dir", nargs="?", type=Path, help="CMake build folder (default: the project's)")
    parser.add_argument("-o", "--output", type=Path, help="trace file (default: BUILD_DIR/.buildkit/build-trace.json)")
    parser.add_argument("--top", type=int, default=20, help="how many translation units to list (default 20)")
    return _report(parser.parse_args(argv))


@exit_on_error
def _report(args: argparse.Namespace) -> int:
    report(args.build_dir or default_build_dir(), args.output, args.top)
    return 0
