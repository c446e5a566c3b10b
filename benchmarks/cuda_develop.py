"""A one-token edit of a .cu file: a develop build (one architecture) against the same
edit built for the wheel's list (issue 23's edit-loop target: <= 0.5x).

tests/packages/cuda_minimal with `cuda-arch-list = "7.5;8.0;8.6;9.0;10.0;12.0"` (the wheel's list,
torch's CUDA 12.8 wheels' architectures)
in two copies: one develops as buildkit does by default (one architecture: this
machine's GPU, else the newest of the list), the other with
BUILDKIT_DEVELOP_CUDA_ARCH_LIST=wheel (the whole list).  Each run flips one token of the
saxpy kernel (`a * x[i]` <-> `x[i] * a`) and times `buildkit develop`; the two copies
take turns.  Needs nvcc (no GPU):

    python benchmarks/cuda_develop.py            # 5 runs per side
    python benchmarks/cuda_develop.py --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from buildkit_testing.projects import copy_test_package
from buildkit_testing.timing import timed, token_flip
from buildkit_testing.venvs import overlay_venv

# The architectures of torch 2.x's CUDA 12.8 wheels: a list a real project ships.
WHEEL_LIST = "7.5;8.0;8.6;9.0;10.0;12.0"
KERNEL = Path("csrc", "saxpy_cuda.cu")
TOKENS = ("y[i] += a * x[i];", "y[i] += x[i] * a;")
TARGET = 0.5
SIDES = {"develop: one architecture (default)": {},
         "develop: the wheel's list": {"BUILDKIT_DEVELOP_CUDA_ARCH_LIST": "wheel"}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per side (default 5)")
    parser.add_argument("--keep", action="store_true", help="keep the projects")
    args = parser.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("benchmarks/cuda_develop.py: needs nvcc on PATH", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="cuda-develop-"))
    python = str(overlay_venv(work / "venv"))
    projects, envs = {}, {}
    try:
        for index, (side, extra) in enumerate(SIDES.items()):
            root = copy_test_package("cuda_minimal", work / f"side{index}" / "cuda_minimal")
            pyproject = root / "pyproject.toml"
            pyproject.write_text(pyproject.read_text() + f'cuda-arch-list = "{WHEEL_LIST}"\n')
            envs[side] = {**os.environ, "BUILDKIT_COMPILER_LAUNCHER": "none", **extra}
            timed([python, "-m", "buildkit", "develop", "."], root, envs[side])  # the cold build
            projects[side] = root
        times: dict[str, list[float]] = {side: [] for side in SIDES}
        for run in range(args.runs):
            for side in SIDES if run % 2 == 0 else reversed(list(SIDES)):
                token_flip(projects[side] / KERNEL, TOKENS)()  # a real edit, which nvcc compiles again
                times[side].append(timed([python, "-m", "buildkit", "develop", "."], projects[side], envs[side]))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    one, whole = (statistics.median(times[side]) for side in SIDES)
    print(f"benchmarks/cuda_develop.py: a one-token .cu edit, median of {args.runs} runs; wheel list {WHEEL_LIST}")
    for side in SIDES:
        print(f"  {side:40} {statistics.median(times[side]):7.2f} s  ({min(times[side]):.2f}-{max(times[side]):.2f})")
    verdict = "PASS" if one / whole <= TARGET else "FAIL"
    print(f"  ratio one / whole list: {one / whole:.2f} (target <= {TARGET}): {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
