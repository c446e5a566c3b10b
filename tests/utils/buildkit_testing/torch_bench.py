"""What the torch extension benchmarks (torch_extension.py, torch_pch.py) share: their
command line, the torch of the interpreter they are given, and a build environment with
compiler caches off and the same number of jobs for every tool."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def arguments(description: str, runs: int, argv: list[str] | None,
              more: Callable[[argparse.ArgumentParser], None] | None = None) -> argparse.Namespace:
    """The shared options, and the script's own that ``more`` adds."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="interpreter with torch and buildkit")
    parser.add_argument("--runs", type=int, default=runs, help="runs per rebuild measurement")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="MAX_JOBS of every build, the same for each tool (default: the cores)")
    parser.add_argument("--keep", action="store_true", help="keep the build folders")
    if more:
        more(parser)
    return parser.parse_args(argv)


def torch_version(python: str) -> str | None:
    """torch's version for ``python``; None (and why, on stderr) when it has no torch."""
    result = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                            check=False)
    if result.returncode == 0:
        return result.stdout.strip()
    print(f"skipped: torch is not installed for {python}. Install it (e.g. pip install torch==2.13.0) with "
          "buildkit, setuptools and ninja into a venv, and pass that venv's python with --python.", file=sys.stderr)
    return None


def torch_cuda(python: str) -> str | None:
    """The CUDA version torch was built with for ``python``; None for a CPU build."""
    script = "import torch; print(torch.version.cuda or '')"
    found = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    return found or None


def build_env(python: str, jobs: int) -> dict[str, str]:
    """This environment without build switches or compiler caches, the venv's tools first,
    ``jobs`` parallel compile jobs for every tool (cpp_extension's and buildkit's MAX_JOBS)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BUILD_", "USE_", "CMAKE_", "MAX_JOBS", "BUILDKIT_", "CCACHE", "SCCACHE",
                                "TORCH_CUDA_ARCH_LIST", "FORCE_"))}
    # cpp_extension finds ninja on PATH; the venv's own comes first.
    env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"
    env["BUILDKIT_COMPILER_LAUNCHER"] = "none"  # buildkit's compiler-cache setting: the compiler, not a cache hit
    env["CCACHE_DISABLE"] = "1"  # a ccache masquerading as the compiler on PATH compiles too
    env["MAX_JOBS"] = str(jobs)
    env["CI"] = "true"
    return env


@dataclass(frozen=True)
class Bench:
    args: argparse.Namespace
    torch: str  # torch's version
    env: dict[str, str]  # build_env's
    work: Path  # a new temporary folder for the projects


def start(description: str, runs: int, argv: list[str] | None, prefix: str,
          more: Callable[[argparse.ArgumentParser], None] | None = None) -> Bench | None:
    """The command line read (with the script's own options that ``more`` adds), torch found
    and a work folder made; None without torch."""
    args = arguments(description, runs, argv, more)
    version = torch_version(args.python)
    if version is None:
        return None
    return Bench(args, version, build_env(args.python, args.jobs), Path(tempfile.mkdtemp(prefix=prefix)))
