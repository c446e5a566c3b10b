"""Test setup: import tensorlet from the source tree (built in place by
tools/dev_build.py or buildkit). Tests that need the native build skip with the
reason when `tensorlet._C` can't be imported; the codegen tests always run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    import tensorlet as tl  # noqa: F401
    IMPORT_ERROR = None
except ImportError as e:  # not built yet
    tl = None
    IMPORT_ERROR = str(e)

if tl is None and os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
    # In CI the README's first command builds tensorlet before the tests: a missing
    # build there is a failure, not 386 quiet skips.
    raise RuntimeError(f"tensorlet is not built ({IMPORT_ERROR}); run `buildkit develop examples/tensorlet` first")

requires_build = pytest.mark.skipif(
    tl is None, reason=f"tensorlet._C is not built ({IMPORT_ERROR}); run `python tools/dev_build.py` first")


def have_tool(name: str) -> bool:
    return shutil.which(name) is not None or (Path(sys.executable).parent / name).exists()


def tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name) or name


def nvcc_path() -> str | None:
    for candidate in (os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if result.returncode != 0:
        raise AssertionError(f"command failed: {' '.join(map(str, cmd))}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def compile_extension(source: Path, out: Path) -> Path:
    """Builds a C++ extension library against the installed tensorlet headers and libtensorlet."""
    import tensorlet.utils
    cxx = os.environ.get("CXX", "g++")
    run([cxx, "-std=c++20", "-O1", "-shared", "-fPIC", source, "-I", tensorlet.utils.include_path,
         "-I", Path(tensorlet.utils.include_path) / "tensorlet", "-L", tensorlet.utils.library_path, "-ltensorlet",
         f"-Wl,-rpath,{tensorlet.utils.library_path}", "-o", out])
    return out
