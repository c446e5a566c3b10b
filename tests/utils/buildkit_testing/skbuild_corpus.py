"""scikit-build-core's own sample packages as a corpus of real projects to port.

The packages come from scikit-build-core's sdist on the package index (its
``tests/packages/`` folder), pinned, downloaded once into ``.corpus-cache/``
(gitignored) so later runs work offline.  A port is what a user changes to build a
package with buildkit: the ``[build-system]`` table, a ``[tool.buildkit]`` table,
edits to ``[project]``, each with its reason; none needs a CMake edit.  The
reference is the wheel scikit-build-core itself builds from the unmodified package,
built once per interpreter and cached beside the sdist.

Used by tests/test_scikit_build_core_corpus.py and benchmarks/skbuild_corpus.py.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tarfile
import venv
from dataclasses import dataclass, field
from pathlib import Path

from buildkit_testing.paths import REPO
from buildkit_testing.processes import clean_env, run

SKBUILD_CORE = "scikit-build-core==1.1.2"
CORPUS_CACHE = REPO / ".corpus-cache"
# What the reference builds install besides scikit-build-core: its samples' build requirements.
REFERENCE_REQUIREMENTS = [SKBUILD_CORE, "pybind11", "cmake", "ninja"]
# What some samples build with, besides the run's wheelhouse: from the package index, once.
CORPUS_BUILD_REQUIREMENTS = {"cython": "cython>=3", "hatchling": "hatchling"}
# What pip prints when it could not reach the index at all (as opposed to a failed build).
UNREACHABLE_MARKERS = ("NewConnectionError", "Network is unreachable", "Temporary failure in name resolution",
                       "Name or service not known", "ConnectTimeoutError", "ProxyError", "Max retries exceeded")


# The samples that test scikit-build-core's own plugins and fallbacks: not ported, as a
# buildkit project does without them (docs/migration/from-scikit-build-core.md lists
# each with what a buildkit user does instead; tests/test_docs.py keeps the two equal).
EXCLUDED = {
    "hatchling": "scikit-build-core's hatchling plugin (CMake inside a hatchling build)",
    "broken_fallback": "`[[tool.scikit-build.overrides]] if.failed`: a failed build retried with other settings",
    "dynamic_metadata": "metadata providers and plugins (`metadata.*.provider`, `[[tool.dynamic-metadata]]`)",
    "plugin_setuptools_install_dir": "the setuptools plugin's `cmake_install_dir` keyword",
    "wrapper_setuptools_classic_layout": "`scikit_build_core.setuptools.wrapper.setup`, classic scikit-build's "
                                         "`setup()`",
    "wrapper_setuptools_install_dir": "the classic wrapper with `cmake_install_dir`",
    "wrapper_setuptools_install_dir_pkgdir": "the classic wrapper with `cmake_install_dir` and `package_dir`",
}


@dataclass(frozen=True)
class Interpreter:
    """The names a wheel takes from the interpreter and platform that built it, which the
    reference data write as placeholders: one data set serves every CPython version."""

    soabi: str  # cpython-312-x86_64-linux-gnu
    python_tag: str  # cp312
    platform: str  # linux_x86_64

    @classmethod
    def current(cls) -> Interpreter:
        return cls(sysconfig.get_config_var("SOABI"), f"cp{sys.version_info[0]}{sys.version_info[1]}",
                   sysconfig.get_platform().replace("-", "_").replace(".", "_"))

    def normalised(self, name: str) -> str:
        """``name`` (a wheel's file name or a member's path) with this interpreter's parts
        as ``{soabi}``, ``{python_tag}`` and ``{platform}``."""
        name = name.replace(f".{self.soabi}.", ".{soabi}.")
        if not name.endswith(".whl"):
            return name
        *head, python, abi, platform = name[: -len(".whl")].split("-")
        tags = ["{python_tag}" if tag == self.python_tag else tag for tag in (python, abi)]
        return "-".join([*head, *tags, "{platform}" if platform == self.platform else platform]) + ".whl"


class IndexUnreachable(Exception):
    """The package index could not be reached, and the cache does not hold what is needed."""


@dataclass(frozen=True)
class Port:
    """What porting one sample package to buildkit changes.

    ``project_edits`` replace lines of ``[project]`` (old line -> (new lines, reason));
    the old line ``""`` adds the new lines before the first table.  ``tool_buildkit``
    is the body of the ``[tool.buildkit]`` table.  Every ``[tool.scikit-build*]``
    table is dropped and ``[build-system]`` replaced (a sample without
    ``pyproject.toml`` gets one).  ``files`` are the other files the port writes, or
    deletes where the content is None (path -> (content, reason)): a setuptools-plugin
    sample's ``setup.py`` and ``setup.cfg``, whose metadata move to ``[project]``.
    """

    name: str
    tool_buildkit: str
    build_requires: tuple[str, ...] = ("setuptools-buildkit",)
    project_edits: dict[str, tuple[str, str]] = field(default_factory=dict)
    files: dict[str, tuple[str | None, str]] = field(default_factory=dict)

    def config_lines(self) -> int:
        """Lines of configuration the port wrote or changed besides ``[build-system]``,
        which every port rewrites: the ``[tool.buildkit]`` table with its header, the
        ``[project]`` lines and the files it writes, comments and blank lines not counted."""
        table = _meaningful(self.tool_buildkit)
        project = sum(len(new.splitlines()) for new, _reason in self.project_edits.values())
        header = bool(table) and not table[0].startswith("[")  # a body that opens with a subtable has none
        written = sum(len(_meaningful(content)) for content, _reason in self.files.values() if content)
        return len(table) + header + project + written


def _meaningful(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def interpreter_tag() -> str:
    """The benchmark's scikit-build-core venv: one cache folder per interpreter and platform."""
    return f"{sys.implementation.cache_tag}-{sysconfig.get_platform()}"


def _pip(*args, cwd=None) -> None:
    """pip with the user's own index configuration (the steering-free environment would
    drop PIP_INDEX_URL); unreachable index -> IndexUnreachable."""
    result = run([sys.executable, "-m", "pip", *args], cwd=cwd, check=False, timeout=600)
    if result.returncode != 0:
        output = result.stdout + result.stderr
        if any(marker in output for marker in UNREACHABLE_MARKERS):
            raise IndexUnreachable(f"`pip {' '.join(map(str, args[:2]))}` could not reach the package index: "
                                   f"{output.strip().splitlines()[-1]}")
        raise AssertionError(f"pip {args} failed:\n{output}")


def sample_packages() -> Path:
    """scikit-build-core's ``tests/packages`` folder, from its pinned sdist."""
    version = SKBUILD_CORE.split("==")[1]
    unpacked = CORPUS_CACHE / f"scikit_build_core-{version}"
    if not (unpacked / "tests" / "packages").is_dir():
        sdists = CORPUS_CACHE / "sdists"
        sdist = sdists / f"scikit_build_core-{version}.tar.gz"
        if not sdist.exists():
            _pip("download", "-q", "--no-binary", ":all:", "--no-deps", "-d", sdists, SKBUILD_CORE)
        with tarfile.open(sdist) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith(f"{unpacked.name}/tests/")]
            archive.extractall(CORPUS_CACHE, members=members, filter="data")
    return unpacked / "tests" / "packages"


def corpus_build_wheels(requirement: str) -> Path:
    """The folder holding the wheels of ``requirement`` (a key of CORPUS_BUILD_REQUIREMENTS:
    Cython for cython_pxd_editable, hatchling for custom_cmake's helper package) and their
    dependencies, for this interpreter: downloaded once into the cache, offline afterwards."""
    folder = CORPUS_CACHE / "build-wheels" / sys.implementation.cache_tag / requirement
    if not (folder / "complete").exists():
        _pip("download", "-q", "--only-binary", ":all:", "-d", folder, CORPUS_BUILD_REQUIREMENTS[requirement])
        (folder / "complete").write_text(CORPUS_BUILD_REQUIREMENTS[requirement] + "\n")
    return folder


def reference_requirements() -> Path:
    """The folder of REFERENCE_REQUIREMENTS' wheels (scikit-build-core, cmake, ninja,
    pybind11), downloaded once into the cache; offline afterwards."""
    wheels = CORPUS_CACHE / "wheels"
    if not list(wheels.glob("scikit_build_core-*.whl")):
        _pip("download", "-q", "--only-binary", ":all:", "-d", wheels, *REFERENCE_REQUIREMENTS)
    return wheels


def reference_venv() -> Path:
    """A venv with scikit-build-core and the samples' build requirements, from wheels
    downloaded once into the cache; returns its python."""
    wheels = reference_requirements()
    path = CORPUS_CACHE / "reference" / interpreter_tag() / "venv"
    python = path / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", wheels, *REFERENCE_REQUIREMENTS],
            env=clean_env(PIP_CONFIG_FILE=os.devnull))
    return python


# --- applying a port ---------------------------------------------------------------

def _tables(text: str) -> list[tuple[str, list[str]]]:
    """The TOML text as (header, lines) blocks; the first block's header is empty."""
    blocks: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        if line.startswith("["):
            blocks.append((line.strip("[] "), [line]))
        else:
            blocks[-1][1].append(line)
    return blocks


def ported_pyproject(original: str, port: Port) -> str:
    requires = ", ".join(f'"{r}"' for r in port.build_requires)
    out = ["[build-system]", f"requires = [{requires}]", 'build-backend = "buildkit.build_meta"', ""]
    if "" in port.project_edits:
        out += [port.project_edits[""][0], ""]
    for header, table in _tables(original):
        if header == "build-system" or header.startswith("tool.scikit-build"):
            continue
        lines = list(table)
        if header == "project":
            for old, (new, _reason) in port.project_edits.items():
                if not old:
                    continue
                assert old in lines, f"{port.name}: [project] has no line {old!r}"
                lines = [new if line == old else line for line in lines]
        out += lines
    while out and out[-1] == "":
        out.pop()
    body = port.tool_buildkit.strip()
    if body:  # a body that starts with a subtable needs no header of its own
        out += ["", *([] if body.startswith("[") else ["[tool.buildkit]"]), body]
    return "\n".join(out) + "\n"


def apply_port(samples: Path, port: Port, target: Path) -> Path:
    """A copy of the sample ``port.name`` in ``target`` with the port applied."""
    shutil.copytree(samples / port.name, target)
    pyproject = target / "pyproject.toml"
    pyproject.write_text(ported_pyproject(pyproject.read_text() if pyproject.exists() else "", port))
    for path, (content, _reason) in port.files.items():
        if content is None:
            (target / path).unlink()
        else:
            (target / path).write_text(content)
    return target
