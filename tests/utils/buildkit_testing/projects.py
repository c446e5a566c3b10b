"""Copies of project sources without build outputs, and projects written from a table."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from buildkit_testing.paths import EXAMPLES, TEST_PACKAGES

# What CMake, buildkit and setuptools put into a source tree: at its top, in its
# package folder, and anywhere (with the extensions built in place).
TOP_OUTPUTS = ("build", "dist", "compile_commands.json")
PACKAGE_OUTPUTS = ("lib", "include", "share", "_codegen", "_build_config.py", "version.py")
OUTPUT_NAMES = {"__pycache__", ".pytest_cache", ".buildkit"}
OUTPUT_SUFFIXES = (".so", ".egg-info")


def copy_sources(project: Path, target: Path, package: str | None = None) -> Path:
    """``project``'s sources in ``target``, without what a build left in the tree; its
    package folder is ``package``, by default named like the project folder.  Files keep
    their mtimes and an existing ``target`` is updated, so a kept copy rebuilds incrementally."""
    package_dir = project / (package or project.name)
    outputs = {project / name for name in TOP_OUTPUTS} | {package_dir / name for name in PACKAGE_OUTPUTS}

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names
                if Path(folder, n) in outputs or n in OUTPUT_NAMES or n.endswith(OUTPUT_SUFFIXES)]

    shutil.copytree(project, target, ignore=ignore, dirs_exist_ok=True)
    return target


OVERLAY_OF = "overlay-of"


def copy_test_package(scenario: str, target: Path) -> Path:
    """tests/packages/<scenario> in ``target``: what the `test_package` fixture hands out.
    A package holding an ``overlay-of`` file is that other package with its own files
    laid over it (minimal includes an ``overlay.cmake``): the base is never copied twice."""
    source = TEST_PACKAGES / scenario
    marker = source / OVERLAY_OF
    if not marker.is_file():
        return copy_sources(source, target)
    copy_sources(TEST_PACKAGES / marker.read_text(encoding="utf-8").strip(), target)
    shutil.copytree(source, target, ignore=lambda folder, names: [OVERLAY_OF] if folder == str(source) else [],
                    dirs_exist_ok=True)
    return target


def copy_example(name: str, target: Path) -> Path:
    """examples/<name> in ``target``, for the examples' own smoke tests only."""
    return copy_sources(EXAMPLES / name, target)


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    """Write each relative path of ``files`` under ``root`` with its text."""
    for relative, text in files.items():
        write_file(root / relative, text)
    return root


def write_file(path: Path, text: str = "x") -> Path:
    """``text`` at ``path`` (UTF-8), its folders made; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def pyproject_text(table: str = "", *, name: str = "demo") -> str:
    """A pyproject.toml of the project ``name``, version 1.0, whose [tool.buildkit] table
    holds ``table`` (its lines, as the test spells them)."""
    return f'[project]\nname = "{name}"\nversion = "1.0"\n\n[tool.buildkit]\n{table}\n'


def write_pyproject(root: Path, table: str = "", *, name: str = "demo") -> Path:
    """``root``/pyproject.toml as `pyproject_text` makes it (replacing one there); returns
    ``root``: the project settings and options tests load."""
    write_file(root / "pyproject.toml", pyproject_text(table, name=name))
    return root


def add_settings(project: Path, lines: str) -> Path:
    """``lines`` added at the top of the [tool.buildkit] table of ``project``'s pyproject.toml
    (a copied test package with a setting of the test's own); returns ``project``."""
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.buildkit]\n" not in text:
        raise ValueError(f"{pyproject} has no [tool.buildkit] table to add {lines!r} to")
    pyproject.write_text(text.replace("[tool.buildkit]\n", f"[tool.buildkit]\n{lines}\n", 1), encoding="utf-8")
    return project


# The least buildkit reads as a project (no build target): its settings, a package with a
# module, a source folder buildkit did not make, and a CMakeLists.txt.
DEMO_PROJECT = {"pyproject.toml": pyproject_text(), "demo/__init__.py": "", "demo/core.py": "def f(): ...\n",
                "src/demo.cpp": "int f() { return 1; }\n", "CMakeLists.txt": "project(demo)\n"}


def with_build_dir(root: Path, build_dir: str) -> Path:
    """The demo project at ``root`` with ``[tool.buildkit] build-dir`` set to ``build_dir``."""
    return write_pyproject(root, f'build-dir = "{build_dir}"')


def fake_torch(site: Path, cuda: str | None, with_cmake: bool = True) -> Path:
    """A torch folder as a wheel installs it, with a dist-info for its version."""
    torch = site / "torch"
    (torch / "share" / "cmake" / "Torch").mkdir(parents=True)
    (torch / "__init__.py").write_text("raise ImportError('doctor must not import torch')\n")
    (torch / "version.py").write_text(f"__version__ = '2.13.0'\ncuda: Optional[str] = {cuda!r}\n")
    if with_cmake:
        (torch / "share" / "cmake" / "Torch" / "TorchConfig.cmake").write_text("# torch\n")
    dist = site / "torch-2.13.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0\n")
    return torch
