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
# What pip prints when it could not reach the index at all (as opposed to a failed build).
UNREACHABLE_MARKERS = ("NewConnectionError", "Network is unreachable", "Temporary failure in name resolution",
                       "Name or service not known", "ConnectTimeoutError", "ProxyError", "Max retries exceeded")


class IndexUnreachable(Exception):
    """The package index could not be reached, and the cache does not hold what is needed."""


@dataclass(frozen=True)
class Port:
    """What porting one sample package to buildkit changes.

    ``project_edits`` replace lines of ``[project]`` (old line -> (new lines, reason));
    the old line ``""`` adds the new lines before the first table.  ``tool_buildkit``
    is the body of the ``[tool.buildkit]`` table.  Every ``[tool.scikit-build*]``
    table is dropped and ``[build-system]`` replaced.
    """

    name: str
    tool_buildkit: str
    build_requires: tuple[str, ...] = ("setuptools-buildkit",)
    project_edits: dict[str, tuple[str, str]] = field(default_factory=dict)

    def config_lines(self) -> int:
        """Lines of configuration the port wrote or changed besides ``[build-system]``,
        which every port rewrites: the ``[tool.buildkit]`` table with its header, the
        ``[project]`` lines, comments and blank lines not counted."""
        table = _meaningful(self.tool_buildkit)
        project = sum(len(new.splitlines()) for new, _reason in self.project_edits.values())
        header = bool(table) and not table[0].startswith("[")  # a body that opens with a subtable has none
        return len(table) + header + project


def _meaningful(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


# --- the ports ---------------------------------------------------------------------

# No port sets install-prefix: each CMakeLists.txt reads SKBUILD_* variables, so buildkit
# installs at the wheel's root, as scikit-build-core does.
PORTS = {port.name: port for port in (
    Port("simplest_c", """
# Outside a git checkout buildkit reads no .gitignore: the files the sample's .gitignore
# names (`*ignored*`) are left out by name, as scikit-build-core leaves them out.
wheel-exclude = ["simplest/ignored.txt", "simplest/artifact_ignored.txt", "simplest/ignored_included.txt"]
"""),
    Port("navigate_editable", """
packages = ["python/shared_pkg"]
"""),
    Port("cmake_generated", """
# [[tool.scikit-build.generate]] wrote cmake_generated/_version.py from a template.
version-module = "_version.py"
# scikit-build-core's wheel.exclude = ["**.c", "**.in"]: buildkit's globs take '**' as a whole segment.
wheel-exclude = ["**/*.c", "**/*.in"]
""", project_edits={'dynamic = ["version"]': (
        'version = "1.2.3"',
        "scikit-build-core's regex provider read the version from CMakeLists.txt; buildkit takes a static "
        "[project] version (or version.txt)")}),
    Port("importlib_editable", """
cmake-source-dir = "src"
"""),
    # No package folder: buildkit installs at the wheel's root by default.
    Port("simple_pyproject_ext", "", build_requires=("setuptools-buildkit", "pybind11")),
    Port("simple_pyproject_source_dir", 'cmake-source-dir = "src"'),
    # No CMake (wheel.cmake = false): the Python side only, a pure wheel.
    Port("generate_include", """
cmake = false
# [[tool.scikit-build.generate]] wrote src/generate_include/_version.py from a template.
version-module = "_version.py"
"""),
    Port("simple_purelib_package", "cmake = false"),
    # The package myns.mypkg in src/myns/mypkg, found from the dotted [project] name as scikit-build-core finds it.
    Port("namespace_purelib_package", "cmake = false"),
    Port("pep639_pure", "cmake = false"),
)}

# A hatchling project in scikit-build-core's samples: the other distribution in the
# namespace `myns` of namespace_purelib_package, installed beside its editable install.
# Ported like the others (its [tool.hatch] table stays, unread), so that it builds from
# the wheelhouse; no scikit-build-core wheel to compare with.
SIBLING_PORT = Port("namespace_sibling_package", "cmake = false")

DEFINES_PORT = Port("cmake_defines", r"""
[tool.buildkit.cmake-defines]
# The same TOML lists: buildkit joins them with ';' and escapes a ';' inside an item.
ONE_LEVEL_LIST = ["Foo", "Bar", "ExceptionallyLargeListEntryThatWouldOverflowTheLine", "Baz"]
NESTED_LIST = ["Apple", "Lemon;Lime", "Banana"]
""", project_edits={"": ('[project]\nname = "cmake_defines"\nversion = "0.0.1"',
                         "buildkit reads the project's name and version (SKBUILD_PROJECT_NAME/VERSION) even to "
                         "configure; the sample has no [project] table")})


def interpreter_tag() -> str:
    """Reference wheels hold extension modules: one cache folder per interpreter and platform."""
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


def reference_wheels(packages: Path, names: list[str]) -> dict[str, Path]:
    """The wheel scikit-build-core builds from each unmodified sample, built once per
    interpreter into the cache: {name: wheel}."""
    cache = CORPUS_CACHE / "reference" / interpreter_tag()
    missing = [name for name in names if not list((cache / name).glob("*.whl"))]
    if missing:
        python = reference_venv()
        for name in missing:
            with_project = Path(shutil.copytree(packages / name, cache / "sources" / name, dirs_exist_ok=True))
            shutil.rmtree(cache / name, ignore_errors=True)
            run([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                 "-w", cache / name, with_project], env=clean_env(PIP_CONFIG_FILE=os.devnull), cwd=with_project)
            shutil.rmtree(with_project)
    return {name: next((cache / name).glob("*.whl")) for name in names}


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
    for header, lines in _tables(original):
        if header == "build-system" or header.startswith("tool.scikit-build"):
            continue
        if header == "project":
            for old, (new, _reason) in port.project_edits.items():
                if not old:
                    continue
                assert old in lines, f"{port.name}: [project] has no line {old!r}"
                lines = [new if line == old else line for line in lines]
        out += lines
    while out[-1] == "":
        out.pop()
    body = port.tool_buildkit.strip()
    if body:  # a body that starts with a subtable needs no header of its own
        out += ["", *([] if body.startswith("[") else ["[tool.buildkit]"]), body]
    return "\n".join(out) + "\n"


def apply_port(samples: Path, port: Port, target: Path) -> Path:
    """A copy of the sample ``port.name`` in ``target`` with the port applied."""
    shutil.copytree(samples / port.name, target)
    pyproject = target / "pyproject.toml"
    pyproject.write_text(ported_pyproject(pyproject.read_text(), port))
    return target
