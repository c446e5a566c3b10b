"""scikit-build-core's own wheels and sdists of its samples, written down as data.

tests/test_scikit_build_core_corpus.py compares each buildkit wheel with the wheel
scikit-build-core builds from the unmodified sample.  Building those references at
test time would cost CI a second build of every sample with a second backend, so
this script builds them once and writes what the comparison needs (each archive's
file list and tag) to ``tests/data/skbuild_reference/<sample>.json``, committed:

    python -m buildkit_testing.skbuild_reference                  # every sample, this Python
    python -m buildkit_testing.skbuild_reference --python python3.10 python3.13 simplest_c

Each interpreter builds in a venv of its own (scikit-build-core, pinned, and the
samples' build requirements, from the package index) made once in ``.corpus-cache/``.
The names that depend on the interpreter and platform are written with placeholders
(``{soabi}``, ``{python_tag}``, ``{platform}``), so one data set serves CPython 3.10
to 3.13 on a platform; with several ``--python`` the script checks that they all
give the same normalised data, and stops naming the difference where they do not.
A sample is built as scikit-build-core's own tests build it: the same environment
variables and config settings (``RECIPES``), dependencies installed first; a sample
that has no ``[project]`` table (scikit-build-core's tests only configure it) gets
the one its port adds.  Needs gfortran for ``fortran_example``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from buildkit_testing.paths import REPO
from buildkit_testing.processes import clean_env, run
from buildkit_testing.skbuild_corpus import CORPUS_CACHE, EXCLUDED, SKBUILD_CORE, Interpreter, sample_packages

REFERENCE_DATA = REPO / "tests" / "data" / "skbuild_reference"
# scikit-build-core with its setuptools plugin, and what the samples build with.
REQUIREMENTS = [SKBUILD_CORE.replace("==", "[setuptools]=="), "setuptools>=77", "wheel", "pybind11", "cmake", "ninja",
                "cython>=3", "numpy", "hatchling"]
SAMPLE_PROJECT = {  # a [project] table for the samples that have none, the one their ports add
    name: f'[project]\nname = "{name}"\nversion = "0.0.1"\n' for name in ("cmake_defines", "config_settings",
                                                                           "simple_pure")}
SKBUILD_BUILD_SYSTEM = '[build-system]\nrequires = ["scikit-build-core"]\nbuild-backend = "scikit_build_core.build"\n\n'
# Runs one PEP 517 hook of the backend in the sample's folder; prints the archive's name.
HOOK_RUNNER = """
import importlib, json, sys
backend, hook, out, settings = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
print(getattr(importlib.import_module(backend), hook)(out, settings or None))
"""
INTERPRETER_PROBE = """
import json, sys, sysconfig
print(json.dumps({"soabi": sysconfig.get_config_var("SOABI"), "python_tag": "cp%d%d" % sys.version_info[:2],
                  "platform": sysconfig.get_platform().replace("-", "_").replace(".", "_")}))
"""


@dataclass(frozen=True)
class Recipe:
    """How scikit-build-core's own tests build a sample (its test module named in ``source``)."""

    source: str
    env: Mapping[str, str] = field(default_factory=dict)
    config_settings: Mapping[str, str] = field(default_factory=dict)
    installed_first: tuple[str, ...] = ()  # sample folders installed into the venv before the build


RECIPES = {
    "filepath_pure": Recipe("test_pyproject_extra_dirs.py", env={
        "SKBUILD_CMAKE_DEFINE": "SOME_DEFINE3=baz;SOME_DEFINE4=baz", "SKBUILD_CMAKE_ARGS": "-DSOME_ARGS1=baz"},
        config_settings={"cmake.define.SOME_DEFINE2": "bar", "cmake.define.SOME_DEFINE3": "bar"}),
    "config_settings": Recipe("test_config_settings.py",
                              config_settings={"zmq.libzmq": "bundled", "zmq.prefix": "/opt/zmq"}),
    "simple_pyproject_script_with_flags": Recipe("test_pyproject_pep517.py",
                                                 env={"CMAKE_ARGS": '-DCMAKE_C_FLAGS="-DFOO=1 -DBAR="'}),
    "custom_cmake": Recipe("test_custom_modules.py", installed_first=("custom_cmake/extern",)),
    "cython_pxd_editable/pkg2": Recipe("test_editable.py", installed_first=("cython_pxd_editable/pkg1",)),
}


def samples(packages: Path) -> list[str]:
    """Every sample buildkit builds: each folder of ``packages`` with a build of its own
    (cython_pxd_editable holds two), less the ones EXCLUDED names."""
    names = []
    for folder in sorted(p for p in packages.iterdir() if p.is_dir() and p.name not in EXCLUDED):
        projects = sorted(p for p in folder.iterdir() if (p / "pyproject.toml").is_file())
        if (folder / "CMakeLists.txt").is_file() or (folder / "pyproject.toml").is_file() or not projects:
            names.append(folder.name)
        else:
            names += [f"{folder.name}/{p.name}" for p in projects]
    return names


def data_file(sample: str) -> Path:
    return REFERENCE_DATA / f"{sample.replace('/', '-')}.json"


def interpreter(python: Path) -> Interpreter:
    return Interpreter(**json.loads(run([python, "-c", INTERPRETER_PROBE]).stdout))


def reference_venv(base: str) -> Path:
    """A venv of the interpreter ``base`` with REQUIREMENTS, made once in the cache."""
    tag = run([base, "-c", "import sys; print(sys.implementation.cache_tag)"]).stdout.strip()
    path = CORPUS_CACHE / "reference-data" / tag
    python = path / "bin" / "python"
    if not (path / "complete").exists():
        run([base, "-m", "venv", "--clear", path])
        run([python, "-m", "pip", "install", "-q", *REQUIREMENTS], timeout=1200)
        (path / "complete").write_text("\n".join(REQUIREMENTS) + "\n")
    return python


def _source_copy(packages: Path, sample: str, target: Path) -> Path:
    project = Path(shutil.copytree(packages / sample, target / sample.replace("/", "-")))
    if sample in SAMPLE_PROJECT:
        pyproject = project / "pyproject.toml"
        existing = pyproject.read_text() if pyproject.exists() else ""
        build_system = "" if "[build-system]" in existing else SKBUILD_BUILD_SYSTEM
        pyproject.write_text(build_system + SAMPLE_PROJECT[sample] + "\n" + existing)
    return project


def _run_hook(python: Path, packages: Path, sample: str, hook: str, work: Path) -> Path:
    """scikit-build-core's archive of ``sample`` (``hook``: build_wheel or build_sdist),
    built in a fresh copy as its tests build it."""
    project = _source_copy(packages, sample, work / hook)
    recipe = RECIPES.get(sample, Recipe(""))
    backend = tomllib.loads((project / "pyproject.toml").read_text())["build-system"]["build-backend"]
    out = work / f"{hook}-out"
    env = clean_env(PIP_CONFIG_FILE=os.devnull, **recipe.env)
    name = run([python, "-c", HOOK_RUNNER, backend, hook, out, json.dumps(dict(recipe.config_settings))],
               cwd=project, env=env).stdout.strip().splitlines()[-1]
    return out / name


def _archive_files(archive: Path) -> list[str]:
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as wheel:
            return sorted(n for n in wheel.namelist() if not n.endswith("/"))
    with tarfile.open(archive) as sdist:
        return sorted(m.name for m in sdist.getmembers() if not m.isdir())


def reference(python: Path, packages: Path, sample: str) -> dict:
    """The normalised data of ``sample`` under the venv's interpreter ``python``."""
    facts = interpreter(python)
    recipe = RECIPES.get(sample, Recipe(""))
    with tempfile.TemporaryDirectory(prefix="skbuild-reference-") as folder:
        work = Path(folder)
        for needed in recipe.installed_first:
            wheel = _run_hook(python, packages, needed, "build_wheel", work / "first" / needed)
            run([python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", wheel])
        archives = {"wheel": _run_hook(python, packages, sample, "build_wheel", work),
                    "sdist": _run_hook(python, packages, sample, "build_sdist", work)}
        data = {"sample": sample, "scikit-build-core": SKBUILD_CORE.split("==")[1],
                "built-as-in": recipe.source or None, "env": dict(recipe.env),
                "config-settings": dict(recipe.config_settings), "installed-first": list(recipe.installed_first),
                "project-table-added": SAMPLE_PROJECT.get(sample)}
        for kind, archive in archives.items():
            data[kind] = {"name": facts.normalised(archive.name),
                          "files": [facts.normalised(name) for name in _archive_files(archive)]}
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", nargs="+", default=[sys.executable],
                        help="interpreters to build with (default: this one); all must agree")
    parser.add_argument("samples", nargs="*", help="samples to build (default: every one)")
    args = parser.parse_args(argv)
    packages = sample_packages()
    chosen = args.samples or samples(packages)
    unknown = sorted(set(chosen) - set(samples(packages)))
    if unknown:
        parser.error(f"no such sample (or an excluded one): {', '.join(unknown)}")
    venvs = [reference_venv(base) for base in args.python]
    REFERENCE_DATA.mkdir(parents=True, exist_ok=True)
    for sample in chosen:
        results = {str(python): reference(python, packages, sample) for python in venvs}
        first, *others = results.values()
        for python, other in zip(list(results)[1:], others, strict=True):
            if other != first:
                raise SystemExit(f"{sample}: {python} gives other data than {venvs[0]}:\n"
                                 f"{json.dumps(other, indent=1)}\n--- against\n{json.dumps(first, indent=1)}")
        first["built-with"] = [interpreter(python).python_tag for python in venvs]  # and agreed on
        data_file(sample).write_text(json.dumps(first, indent=1) + "\n")
        print(f"{sample}: {data_file(sample).relative_to(REPO)} ({len(first['wheel']['files'])} wheel files, "
              f"{len(first['sdist']['files'])} sdist files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
