"""Real pybind11 and nanobind modules, with the versions the package index has, found by
find_package(... CONFIG) in whatever build environment the front end makes.

The pybind11 project (tests/packages/pybind_src: a src/ layout, CMake installing at the
wheel's root) goes through every front end, each into a fresh venv, and is imported from
an unrelated folder; the nanobind project (tests/packages/nanobind_top: one top-level
module) through `pip install .` only.  Before buildkit put the running build
environment's site-packages on CMAKE_PREFIX_PATH, `pip install .` failed here with
"Could not find a package configuration file provided by pybind11".

A second isolated `pip install .` of the unchanged project must compile nothing: pip
unpacks pybind11 into a new temporary folder with fresh mtimes each time, and only the
mirror of the build environment (build/build-env) keeps the compile lines and header
times still.  pip, not uv: uv's hard-linked cache keeps mtimes and would hide the problem.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from buildkit_testing.artifacts import only_wheel
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, pip_into, venv_env

pytestmark = pytest.mark.slow

CHECK = "import pybsrc, pybsrc._core as core; print(pybsrc.add(2, 40), pybsrc.built_with, core.__file__, sep='|')"


def imports_from(python: Path, cwd: Path) -> Path:
    """Import the built module from ``cwd`` (never the project) and call it; its file."""
    cwd.mkdir(exist_ok=True)
    total, built_with, origin = run([python, "-c", CHECK], cwd=cwd, env=clean_env()).stdout.strip().split("|")
    assert (total, built_with) == ("42", "pybind11 0.4.0")
    return Path(origin)


def uv(*arguments, python: Path, wheelhouse: Path, tmp_path: Path, cwd: Path | None = None):
    """uv limited to the wheelhouse, with a cache of its own."""
    return run([sys.executable, "-m", "uv", *arguments, "--python", python, "--no-index", "--find-links", wheelhouse],
               cwd=cwd, env=venv_env(python, wheelhouse, UV_CACHE_DIR=str(tmp_path / "uv-cache")))


def python_build(project: Path, python: Path, wheelhouse: Path, tmp_path: Path) -> Path:
    run([sys.executable, "-m", "build", "--wheel", "--outdir", tmp_path / "dist", project], cwd=project,
        env=venv_env(python, wheelhouse))
    pip_into(python, wheelhouse, "install", "-q", only_wheel(tmp_path / "dist"))
    return python.parent.parent


def pip_editable(project: Path, python: Path, wheelhouse: Path, tmp_path: Path) -> Path:
    pip_into(python, wheelhouse, "install", "-q", "-e", project)
    return project / "src" / "pybsrc"


def buildkit_develop(project: Path, python: Path, wheelhouse: Path, tmp_path: Path) -> Path:
    pip_into(python, wheelhouse, "install", "-q", *BUILDKIT_WITH_TOOLS, "pybind11")
    run([python, "-m", "buildkit", "develop", project], cwd=project, env=clean_env())
    return project / "src" / "pybsrc"


def uv_build(project: Path, python: Path, wheelhouse: Path, tmp_path: Path) -> Path:
    # --wheel builds from the project folder (plain `uv build` goes through an sdist in a
    # temporary folder, with a build folder of its own).
    uv("build", "--wheel", "--out-dir", tmp_path / "uv-dist", project, python=python, wheelhouse=wheelhouse,
       tmp_path=tmp_path)
    [wheel] = (tmp_path / "uv-dist").glob("*.whl")  # uv writes a .gitignore beside it
    uv("pip", "install", wheel, python=python, wheelhouse=wheelhouse, tmp_path=tmp_path)
    return python.parent.parent


def uv_editable(project: Path, python: Path, wheelhouse: Path, tmp_path: Path) -> Path:
    uv("pip", "install", "-e", project, python=python, wheelhouse=wheelhouse, tmp_path=tmp_path)
    return project / "src" / "pybsrc"


# Each installs into the venv of ``python`` and returns where the module must come from.
# `pip install .` is the isolation test below.
FRONT_ENDS: dict[str, Callable[[Path, Path, Path, Path], Path]] = {
    "python -m build --wheel": python_build,
    "pip install -e .": pip_editable,
    "buildkit develop": buildkit_develop,
    "uv build --wheel": uv_build,
    "uv pip install -e .": uv_editable,
}


def test_pybind11_src_layout_through_each_front_end(test_package: Callable[..., Path], wheelhouse: Path,
                                                    tmp_path: Path) -> None:
    """One project, each front end in turn, each into a fresh venv: all of them share the
    build folder, and only the first compiles (the others bring the same pybind11 in
    another build environment, or none at all)."""
    project = test_package("pybind_src")
    ninja_log = build_folder(project) / ".ninja_log"
    compiled = None
    for number, (front_end, install) in enumerate(FRONT_ENDS.items()):
        python = make_venv(tmp_path / f"venv-{number}", with_pip=False)
        expected = install(project, python, wheelhouse, tmp_path)
        origin = imports_from(python, tmp_path / "elsewhere")
        assert origin.is_relative_to(expected), f"{front_end}: imported {origin}, not from {expected}"
        compiled = compiled or ninja_log.read_text()
        assert ninja_log.read_text() == compiled, f"{front_end} compiled again"


def test_a_second_isolated_pip_install_compiles_nothing(test_package: Callable[..., Path], wheelhouse: Path,
                                                        tmp_path: Path) -> None:
    project = test_package("pybind_src")
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, wheelhouse, "install", "-q", project)
    assert imports_from(python, tmp_path / "elsewhere").is_relative_to(tmp_path / "venv")
    ninja_log = build_folder(project) / ".ninja_log"
    first = ninja_log.read_text()
    assert "_core" in first and (build_folder(project) / "build-env" / "pybind11").is_dir()
    # pip's build environment, its mirror first; not the venv pip installs into.
    inputs = json.loads((build_folder(project) / ".buildkit" / "configure.json").read_text())["inputs"]
    prefix = inputs["CMAKE_PREFIX_PATH"].split(";")
    assert prefix[0] == str(build_folder(project) / "build-env") and "pip-build-env-" in prefix[1], prefix
    assert not any(Path(p).is_relative_to(tmp_path / "venv") for p in prefix), prefix

    second = pip_into(python, wheelhouse, "install", "-v", "--force-reinstall", "--no-deps", project)
    assert ninja_log.read_text() == first, "the second isolated build compiled or linked again"
    assert "mirrored the build environment" not in second.stdout + second.stderr
    assert imports_from(python, tmp_path / "elsewhere").is_relative_to(tmp_path / "venv")


def test_nanobind_top_level_and_src_modules_with_pip(test_package: Callable[..., Path], wheelhouse: Path,
                                            tmp_path: Path) -> None:
    project = test_package("nanobind_top")
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, wheelhouse, "install", "-q", project)
    probe = ("import nbtop, nbpkg; print(nbtop.greet('nanobind'), nbtop.scale(1.5), nbpkg.twice(21), nbtop.__file__,"
             " sep='|')")
    (tmp_path / "elsewhere").mkdir()
    greeting, scaled, twice, origin = run([python, "-c", probe], cwd=tmp_path / "elsewhere",
                                          env=clean_env()).stdout.strip().split("|")
    assert (greeting, scaled, twice) == ("hello, nanobind", "3.0", "42")  # top-level and src/ modules
    assert Path(origin).parent.name == "site-packages" and Path(origin).is_relative_to(tmp_path / "venv")
