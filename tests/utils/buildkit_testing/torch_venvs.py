"""Venvs with a real torch, for the torch-marked tests: the newest release on the package
index (a CUDA build, about 3 GB with NVIDIA's wheels) and one pinned older release (a CPU
build).  A machine-wide pip constraint that caps torch (a local mirror's) is lifted, so the
newest row gets the index's newest version; where pip cannot install a row it is skipped
with the reason."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from buildkit_testing.artifacts import only_wheel
from buildkit_testing.processes import clean_env, run
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, pip_into

PINNED_TORCH = "2.13.0"  # the older release every torch test also runs against
ROWS = ("newest", "pinned")


def newest_torch() -> str:
    """The newest torch release on the package index (pip's own answer, no local cap)."""
    listed = run([sys.executable, "-m", "pip", "index", "versions", "torch"], check=False,
                 env=clean_env(PIP_CONSTRAINT=os.devnull))
    found = re.search(r"^torch \(([^)]+)\)", listed.stdout, re.MULTILINE)
    if found is None:
        pytest.skip(f"the package index lists no torch here: {listed.stderr.strip()[-300:]}")
    return found[1]


def torch_venv(row: str, folder: Path, wheelhouse: Path) -> Path:
    """A fresh venv in ``folder`` with the torch of ``row`` and buildkit from the wheelhouse;
    its python.  torch comes through pip's own configuration and the caller's PIP_* variables
    (for the pinned row here: the machine's local CPU wheel; elsewhere PIP_INDEX_URL can name a
    CPU-only index)."""
    version = newest_torch() if row == "newest" else PINNED_TORCH
    python = make_venv(folder / "venv", with_pip=False)
    installed = run([sys.executable, "-m", "pip", "--python", python, "install", "-q", f"torch=={version}"],
                    check=False, timeout=1800, env=clean_env(PIP_CONSTRAINT=os.devnull))
    if installed.returncode != 0:
        pytest.skip(f"torch=={version} cannot be installed here: {installed.stderr.strip()[-500:]}")
    pip_into(python, wheelhouse, "install", "-q", *BUILDKIT_WITH_TOOLS, "setuptools", "wheel")
    return python


def public_version(python: Path, distribution: str) -> str:
    """The installed version of ``distribution`` without its local part (2.13.0+cpu: 2.13.0)."""
    script = f"from importlib.metadata import version; print(version({distribution!r}))"
    return run([python, "-c", script]).stdout.strip().split("+")[0]


def wheel_without_isolation(python: Path, wheelhouse: Path, project: Path, out: Path, **env: str) -> Path:
    """`pip wheel --no-build-isolation` of ``project`` in the venv of ``python`` (a torch
    extension builds against the torch installed there); the one wheel made in ``out``."""
    pip_into(python, wheelhouse, "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", out, project, **env)
    return only_wheel(out)
