"""A cold isolated build, buildkit against scikit-build-core (issue 26's protocol).

Two projects, each built from a fresh copy every run: `nbexample` (tests/packages: the
shape of nanobind's example, one stable-ABI module with nanobind's library compiled in)
and scikit-build-core's own `simplest_c` sample (from its pinned sdist; buildkit's side
is the port tests/test_scikit_build_core_corpus.py checks).  Each is built with
`pip install .` into a venv and with `python -m build --wheel`, by each tool, the two
sides alternating run by run, so that a change in the machine's load hits both:

    python benchmarks/cold_build.py              # 5 runs per side and row
    python benchmarks/cold_build.py --runs 1     # a quick look
    python benchmarks/cold_build.py --smoke      # simplest_c, `pip install .`, one run per side, not judged (CI)

Both sides get the same cmake and ninja (this machine's, found on PATH: neither build
environment installs its own), the same job count (CMAKE_BUILD_PARALLEL_LEVEL), the
same build type (Release, both tools' default) and no compiler cache
(BUILDKIT_COMPILER_LAUNCHER=none; scikit-build-core uses none unless told).  The build
environments install from one local wheelhouse: buildkit's wheel from this checkout,
scikit-build-core 1.1.2 and the projects' build requirements.  Prints each row's
medians, the ratio buildkit / scikit-build-core with its spread (the lowest and highest
ratio of the runs paired in order) and PASS when every median ratio is <= 1.0.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from buildkit_testing.paths import TEST_PACKAGES
from buildkit_testing.processes import clean_env
from buildkit_testing.skbuild_corpus import apply_port, reference_requirements, sample_packages
from buildkit_testing.skbuild_ports import PORTS
from buildkit_testing.timing import scratch_folder, timed
from buildkit_testing.venvs import make_venv, make_wheelhouse

TARGET = 1.0
SIDES = ("scikit-build-core", "buildkit")


def nbexample(side: str, target: Path) -> Path:
    """tests/packages/nbexample with the pyproject.toml of ``side``."""
    shutil.copytree(TEST_PACKAGES / "nbexample", target)
    skbuild = target / "pyproject.skbuild.toml"
    if side == "scikit-build-core":
        skbuild.replace(target / "pyproject.toml")
    else:
        skbuild.unlink()
    return target


def simplest_c(side: str, target: Path) -> Path:
    """scikit-build-core's sample as it ships, or buildkit's port of it."""
    if side == "scikit-build-core":
        return Path(shutil.copytree(sample_packages() / "simplest_c", target))
    return apply_port(sample_packages(), PORTS["simplest_c"], target)


PROJECTS: dict[str, Callable[[str, Path], Path]] = {"nbexample": nbexample, "simplest_c": simplest_c}


def measure(make: Callable[[str, Path], Path], verb: str, runs: int, targets: dict[str, Path], base: Path,
            env: dict[str, str]) -> dict[str, list[float]]:
    """``runs`` cold builds of fresh copies by each side, the sides taking turns."""
    times: dict[str, list[float]] = {side: [] for side in SIDES}
    for run in range(runs):
        for side in SIDES if run % 2 == 0 else reversed(SIDES):
            project = make(side, base / f"{side}-{run}")
            if verb.startswith("pip"):
                command = [targets[side], "-m", "pip", "install", "-q", "--no-deps", "."]
            else:
                command = [sys.executable, "-m", "build", "--wheel", "-o", project / "dist", "."]
            times[side].append(timed([str(c) for c in command], project, env))
            shutil.rmtree(project)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per side and row (default 5)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="CMAKE_BUILD_PARALLEL_LEVEL")
    parser.add_argument("--smoke", action="store_true", help="simplest_c's `pip install .` once per side, not judged")
    parser.add_argument("--wheelhouse", type=Path, help="a wheelhouse holding this checkout's buildkit wheel")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)

    projects = {"simplest_c": simplest_c} if args.smoke else PROJECTS
    verbs = ("pip install .",) if args.smoke else ("pip install .", "python -m build --wheel")
    runs = 1 if args.smoke else args.runs
    load_before = os.getloadavg()[0]
    with scratch_folder("cold-build-", keep=args.keep) as work:
        house = args.wheelhouse or make_wheelhouse(work / "wheelhouse")
        # scikit-build-core and its own requirements from the corpus cache, beside buildkit's wheelhouse
        links = f"{house} {reference_requirements()}"
        env = clean_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=links, PIP_CONFIG_FILE=os.devnull,
                        PIP_DISABLE_PIP_VERSION_CHECK="1", CMAKE_BUILD_PARALLEL_LEVEL=str(args.jobs),
                        BUILDKIT_COMPILER_LAUNCHER="none")
        targets = {side: make_venv(work / f"venv-{side}") for side in SIDES}
        rows = [(f"{name}: {verb}", measure(make, verb, runs, targets, work / f"{name}-{verb.split()[0]}", env))
                for name, make in projects.items() for verb in verbs]

    print(f"benchmarks/cold_build.py: median of {runs} runs per side, {args.jobs} jobs, Python "
          f"{sys.version.split()[0]}; load average {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    print(f"  {'row':42} {'skbuild':>9} {'buildkit':>9} {'ratio':>6}  spread")
    ratios = []
    for row, times in rows:
        theirs, ours = statistics.median(times[SIDES[0]]), statistics.median(times[SIDES[1]])
        paired = [b / s for s, b in zip(times[SIDES[0]], times[SIDES[1]], strict=True)]
        ratios.append(ours / theirs)
        print(f"  {row:42} {theirs:8.2f}s {ours:8.2f}s {ours / theirs:6.2f}  {min(paired):.2f}-{max(paired):.2f}")
    if args.smoke:
        return 0  # one run of the smallest row: not judged
    verdict = "PASS" if all(r <= TARGET for r in ratios) else "FAIL"
    print(f"  target: every median ratio <= {TARGET}: {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
