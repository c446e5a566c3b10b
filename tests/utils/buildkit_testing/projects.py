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
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def write_file(path: Path, text: str = "x") -> Path:
    """``text`` at ``path``, its folders made; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# The least buildkit reads as a project (no build): its settings, package and CMake layout.
DEMO_PROJECT = {"pyproject.toml": '[project]\nname = "demo"\nversion = "1.0"\n', "demo/__init__.py": "",
                "CMakeLists.txt": "project(demo)\n"}


def with_build_dir(root: Path, build_dir: str) -> Path:
    """The demo project at ``root`` with ``[tool.buildkit] build-dir`` set to ``build_dir``."""
    write_file(root / "pyproject.toml", DEMO_PROJECT["pyproject.toml"] + f'[tool.buildkit]\nbuild-dir = "{build_dir}"\n')
    return root
