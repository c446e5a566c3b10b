"""scikit-build-core's sample packages built by scikit-build-core and, ported, by buildkit.

For the first six samples tests/test_scikit_build_core_corpus.py ported (the ones that
build with cmake, ninja and pybind11 alone, from their plain sources), in one run on one
machine: the lines of configuration the port needed, the time of a cold wheel build
(`pip wheel --no-build-isolation` of a fresh copy, no build folder) by each tool, the
ratio, and the no-op `buildkit develop` of the ported copy:

    python benchmarks/skbuild_corpus.py              # 3 runs per row, medians
    python benchmarks/skbuild_corpus.py --runs 5

Both tools build in venvs of their own with the same cmake, ninja and pybind11
wheels; buildkit's wheel is built from this checkout.  The samples and
scikit-build-core come from the package index once (cached in .corpus-cache/).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from buildkit_testing.processes import clean_env
from buildkit_testing.skbuild_corpus import apply_port, reference_venv, sample_packages
from buildkit_testing.skbuild_ports import PORTS
from buildkit_testing.venvs import make_venv, make_wheelhouse, pip_install

# The samples timed: they need no environment, config setting or extra build requirement.
TIMED = ("simplest_c", "navigate_editable", "cmake_generated", "importlib_editable", "simple_pyproject_ext",
         "simple_pyproject_source_dir")


def timed(command: list, cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run([str(c) for c in command], cwd=cwd, env=clean_env(PIP_CONFIG_FILE=os.devnull), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def wheel_build(python: Path, project: Path, out: Path) -> float:
    """A cold wheel build of ``project``; the project folder goes afterwards."""
    seconds = timed([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                     "-w", out, project], cwd=project)
    shutil.rmtree(project)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (default 3)")
    args = parser.parse_args(argv)

    samples = sample_packages()
    skbuild_python = reference_venv()
    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="skbuild-corpus-"))
    try:
        buildkit_python = make_venv(work / "buildkit-venv")
        pip_install(buildkit_python, make_wheelhouse(work / "wheelhouse"), "setuptools-buildkit", "setuptools",
                    "wheel", "cmake", "ninja", "pybind11")
        floor = statistics.median(timed([buildkit_python, "-c", "pass"]) for _ in range(args.runs))
        rows = []
        for name, port in ((name, PORTS[name]) for name in TIMED):
            theirs, ours = [], []
            for run in range(args.runs):  # alternate, so that a change in load hits both
                folder = work / f"{name}-{run}"
                theirs.append(wheel_build(skbuild_python, Path(shutil.copytree(samples / name, folder / "sk")),
                                          folder / "dist-sk"))
                ours.append(wheel_build(buildkit_python, apply_port(samples, port, folder / "bk"), folder / "dist-bk"))
            project = apply_port(samples, port, work / f"{name}-develop")
            timed([buildkit_python, "-m", "buildkit", "develop", project])  # the cold build
            no_op = [timed([buildkit_python, "-m", "buildkit", "develop", project]) for _ in range(args.runs)]
            rows.append((name, port.config_lines(), statistics.median(theirs), statistics.median(ours),
                         statistics.median(no_op)))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"scikit-build-core's samples, median of {args.runs} runs; `python -c pass` in buildkit's venv: "
          f"{floor:.3f} s; load average {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    print(f"{'sample':30} {'config lines':>12} {'skbuild wheel':>14} {'buildkit wheel':>15} {'ratio':>6} "
          f"{'no-op develop':>14}")
    for name, lines, theirs, ours, no_op in rows:
        print(f"{name:30} {lines:12d} {theirs:13.2f}s {ours:14.2f}s {ours / theirs:5.2f}x {no_op:13.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
