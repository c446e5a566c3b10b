"""What the torch extension benchmarks (torch_extension.py, torch_pch.py) share: their
command line, the torch of the interpreter they are given, and a build environment with
compiler caches off."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


def arguments(description: str, runs: int, argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="interpreter with torch and buildkit")
    parser.add_argument("--runs", type=int, default=runs, help="runs per rebuild measurement")
    parser.add_argument("--keep", action="store_true", help="keep the build folders")
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


def build_env(python: str) -> dict[str, str]:
    """This environment without build switches or compiler caches, the venv's tools first."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BUILD_", "USE_", "CMAKE_", "MAX_JOBS", "BUILDKIT_", "CCACHE", "SCCACHE"))}
    # cpp_extension finds ninja on PATH; the venv's own comes first.
    env["PATH"] = f"{Path(python).parent}{os.pathsep}{env.get('PATH', '')}"
    env["BUILDKIT_COMPILER_LAUNCHER"] = "none"  # the compiler, not a cache hit (see rebuild.py)
    env["CI"] = "true"
    return env


@dataclass(frozen=True)
class Bench:
    args: argparse.Namespace
    torch: str  # torch's version
    env: dict[str, str]  # build_env's
    work: Path  # a new temporary folder for the projects


def start(description: str, runs: int, argv: list[str] | None, prefix: str) -> Bench | None:
    """The command line read, torch found and a work folder made; None without torch."""
    args = arguments(description, runs, argv)
    version = torch_version(args.python)
    if version is None:
        return None
    return Bench(args, version, build_env(args.python), Path(tempfile.mkdtemp(prefix=prefix)))
