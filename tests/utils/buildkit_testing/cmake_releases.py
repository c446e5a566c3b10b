"""The oldest CMake buildkit accepts (the ``cmake-minimum-version`` setting's default), from
its PyPI wheel, for tests that run buildkit's own CMake code (cmake/*.cmake) under it as
well as under the newest: a machine's CMake of that age (Debian 12's 3.25) is the one
buildkit takes, before the PyPI package, wherever it is on PATH."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from buildkit.config.settings import setting_default
from buildkit_testing.processes import run
from buildkit_testing.venvs import WHEEL_CACHE

OLDEST_CMAKE = setting_default("cmake_minimum_version")  # "3.24": the newest 3.24.x is taken


def oldest_cmake() -> Path:
    """The ``cmake`` program of the newest patch release of the oldest CMake buildkit accepts,
    downloaded once into the run's wheel cache and unpacked beside it."""
    folder = WHEEL_CACHE / f"cmake-{OLDEST_CMAKE}"
    program = folder / "cmake" / "data" / "bin" / "cmake"
    if program.is_file():
        return program
    wheels = WHEEL_CACHE / f"cmake-{OLDEST_CMAKE}-wheel"
    if not list(wheels.glob("cmake-*.whl")):
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", wheels,
             f"cmake=={OLDEST_CMAKE}.*"])
    unpacked = Path(tempfile.mkdtemp(prefix=f"{folder.name}-", dir=WHEEL_CACHE))
    with zipfile.ZipFile(next(wheels.glob("cmake-*.whl"))) as wheel:
        wheel.extractall(unpacked)
    for tool in (unpacked / "cmake" / "data" / "bin").iterdir():
        tool.chmod(0o755)
    try:
        os.rename(unpacked, folder)  # whole or not at all: a second run finds it complete
    except OSError:  # another process unpacked it first
        shutil.rmtree(unpacked)
    return program
