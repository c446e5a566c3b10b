"""Helpers shared by buildkit's tests: commands, venvs, copies of the examples.

The name `buildkit` on the public index belongs to another project, so every venv
a test makes installs from the local wheelhouse with `--no-index` only.  (Kept out
of conftest.py: examples/tensorlet/test has a conftest of its own, and two modules
named `conftest` cannot both be imported by name.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


EXAMPLES = REPO / "examples"


# Build-time dependencies of buildkit and its examples; downloaded once into a
# persistent cache so later runs (and CI's second test session) work offline.
WHEELHOUSE_REQUIREMENTS = ["setuptools>=69", "wheel", "packaging", "rich", "cmake", "ninja", "pyyaml", "numpy"]


WHEEL_CACHE = REPO / ".wheelhouse"


def run(command, cwd=None, env=None, check=True, timeout=900, **kwargs) -> subprocess.CompletedProcess:
    """Run a command as an argument list, capturing output; on failure show it all."""
    result = subprocess.run([str(c) for c in command], cwd=cwd, env=env, text=True, capture_output=True,
                            timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"command failed ({result.returncode}): {command}\n--- stdout\n{result.stdout}"
                             f"\n--- stderr\n{result.stderr}")
    return result


def make_wheelhouse(house: Path) -> Path:
    """buildkit's wheel (built from this checkout) plus its and the examples' build
    dependencies, downloaded once into WHEEL_CACHE: the one local wheelhouse of a test run."""
    WHEEL_CACHE.mkdir(exist_ok=True)
    have = {p.name.split("-")[0].lower() for p in WHEEL_CACHE.glob("*.whl")}
    wanted = {r.split(">")[0].split("=")[0].lower() for r in WHEELHOUSE_REQUIREMENTS}
    if not wanted <= have:
        run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", WHEEL_CACHE,
             *WHEELHOUSE_REQUIREMENTS])
    house.mkdir(parents=True, exist_ok=True)
    for wheel in WHEEL_CACHE.glob("*.whl"):
        if not wheel.name.startswith("setuptools_buildkit-"):
            shutil.copy2(wheel, house)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", house, REPO])
    return house


def clean_env(**overrides: str) -> dict[str, str]:
    """The environment minus anything that would steer a build under test."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BUILD_", "USE_", "CMAKE_", "MAX_JOBS", "DEBUG", "REL_WITH", "VERBOSE",
                                "PIP_", "BUILDKIT_", "VIRTUAL_ENV"))}
    # Hermetic builds: no compiler cache found on PATH joins in unless a test asks for one.
    env["BUILDKIT_COMPILER_LAUNCHER"] = "none"
    env.update(overrides)
    return env


def make_venv(path: Path) -> Path:
    """A fresh venv; returns its python."""
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin" / "python"


def pip_install(python: Path, wheelhouse: Path, *requirements: str, cwd=None, env=None, check=True):
    return run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", wheelhouse, *requirements],
               cwd=cwd, env=env or clean_env(), check=check)


def copy_example(name: str, target: Path) -> Path:
    """Copy an example's sources: not its build folder, nor what CMake installed into its package."""
    source = EXAMPLES / name
    package = source / name
    outputs = {package / "lib", package / "include", package / "share", package / "version.py",
               source / "build", source / "dist", source / "compile_commands.json"}

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if Path(folder, n) in outputs or n == "__pycache__"
                or n.endswith((".so", ".egg-info"))]

    shutil.copytree(source, target, ignore=ignore)
    return target


def overlay_venv(path: Path) -> Path:
    """A pip-less venv that sees this interpreter's packages (buildkit, setuptools...)
    through a .pth file but installs into its own site-packages: cheap, and an
    editable registration made in it never touches the test runner's environment."""
    import sysconfig

    venv.EnvBuilder(with_pip=False, clear=True, symlinks=True).create(path)
    python = path / "bin" / "python"
    own_site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    # An 'import' line in a .pth runs; addsitedir also processes the .pth files there (editable finders).
    (own_site / "_buildkit_test_overlay.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    return python


def venv_env(python: Path, wheelhouse: Path, **overrides: str) -> dict[str, str]:
    """clean_env for a command run in the venv of ``python``: as if activated (its bin
    first on PATH), and pip, in isolated build environments too, limited to the
    wheelhouse (no index, no pip config file with its own find-links)."""
    bin_dir = python.parent
    return clean_env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", VIRTUAL_ENV=str(bin_dir.parent),
                     PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheelhouse), PIP_CONFIG_FILE=os.devnull,
                     PIP_DISABLE_PIP_VERSION_CHECK="1", **overrides)
