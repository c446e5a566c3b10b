"""A ``buildkit.torch`` project: one whose ``setup.py`` is its configuration.

Such a project comes from ``torch.utils.cpp_extension`` with its imports changed to
``buildkit.torch``: its name, version, packages and extensions are what its ``setup()``
call says, known only once setup.py has run (it usually imports torch to decide them).
The front end reads them from setuptools' distribution into :class:`SetupFacts`; this
module makes the project's settings of them.  A ``pyproject.toml`` is optional, and so
is ``[tool.buildkit]``: where there is one it still says how buildkit builds (the build
folder, CUDA architectures, build type, compiler launcher, more library dependencies),
but a key for what setup.py decides (packages, the extensions, the version, the
metadata) is refused by name, as it would otherwise be ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildkit.config.modes import InstallPrefix, VersionPolicy
from buildkit.config.pyproject import TABLE, buildkit_table, read_pyproject
from buildkit.config.schema import read_table
from buildkit.config.settings import LibraryDependency, ProjectSettings, load_settings
from buildkit.errors import ConfigError

# `from buildkit.torch import ...` or `import buildkit.torch` at the start of a line of setup.py.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+buildkit\.torch[ \t]+import\b|import[ \t]+buildkit\.torch\b)", re.M)
# The [tool.buildkit] keys that still apply: how buildkit builds, not what setup.py decides.
APPLYING_KEYS = frozenset({"build-dir", "cmake-minimum-version", "env-prefix", "cmake-defines", "cmake-aliases",
                           "cmake-forward", "library-dependencies", "cuda-runtime", "py-api", "job-memory-mb",
                           "cuda-job-memory-mb", "allow-outside-links"})
# Build options that name a wheel of a split project: a buildkit.torch project has one wheel.
REFUSED_OPTION_KEYS = frozenset({"library-only"})
TORCH = LibraryDependency(distribution="torch", cmake_package="Torch", version=VersionPolicy.EXACT)


def uses_drop_in(root: Path | str) -> bool:
    """Whether the project's setup.py imports ``buildkit.torch``."""
    try:
        text = (Path(root) / "setup.py").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return _IMPORT.search(text) is not None


@dataclass(frozen=True)
class SetupFacts:
    """What setup.py's ``setup()`` call says, as buildkit needs it."""

    name: str
    version: str
    # setuptools' layout keywords: package_dir, packages, py_modules ([tool.setuptools]'s spelling).
    layout: Mapping[str, Any]
    package: str  # the import package the extension modules go into
    # options={"bdist_wheel": {"py_limited_api": "cp39"}}: buildkit's `py-api`.
    py_api: str | None
    source_folder: str  # the folder inside the build folder that holds the CMake project written for it
    cmake_defines: Mapping[str, str] = field(default_factory=dict)  # what the environment asks of CMake
    # Folders whose listing the extensions came from (setup.py globs its sources): a file added
    # or removed there runs setup.py again instead of the no-op develop.
    inputs: tuple[Path, ...] = ()


def load_drop_in_settings(root: Path | str, option_keys: frozenset[str], facts: SetupFacts) -> ProjectSettings:
    """The settings of the buildkit.torch project at ``root`` whose setup.py says ``facts``."""
    root = Path(root).resolve()
    path = root / "pyproject.toml"
    data = read_pyproject(path) or {}
    table = buildkit_table(data, path)
    refused = sorted(key for key in table if key not in APPLYING_KEYS and (key not in option_keys
                                                                          or key in REFUSED_OPTION_KEYS))
    if refused:
        raise ConfigError(
            f"[{TABLE}] in {path} sets {', '.join(f'`{key}`' for key in refused)}, which setup.py decides for a "
            "project that builds with buildkit.torch (its setup() call's packages, extensions, version and "
            "metadata).",
            f"Remove {'it' if len(refused) == 1 else 'them'} and say it in setup.py; the keys that apply are "
            f"{', '.join(sorted(APPLYING_KEYS))} and the build options (docs/configuration.md).")
    values = read_table(ProjectSettings, table, (f"[{TABLE}]",), also_known=option_keys)
    py_api = values.pop("py_api", None)
    if py_api is not None and facts.py_api is not None and py_api != facts.py_api:
        raise ConfigError(
            f"[{TABLE}] py-api = {py_api!r} in {path}, but setup.py asks bdist_wheel for py_limited_api = "
            f"{facts.py_api!r}.", "Keep one of them (setup.py's is what cpp_extension reads).")
    declared = values.pop("library_dependencies", ())
    if not any(dependency.distribution.lower() == TORCH.distribution for dependency in declared):
        declared = (TORCH, *declared)  # the wheel requires the torch it was built against
    return ProjectSettings(
        root=root, project_name=facts.name, static_version=facts.version, setuptools_table=dict(facts.layout),
        option_defaults={key: value for key, value in table.items() if key in option_keys},
        generated_source=facts.source_folder, configuration_inputs=facts.inputs,
        package=facts.package, install_prefix=InstallPrefix.WHEEL_ROOT, version_module="",
        library_dependencies=declared, py_api=py_api or facts.py_api,
        **{**values, "cmake_defines": {**facts.cmake_defines, **values.get("cmake_defines", {})}})


def tool_settings(root: Path | str, option_keys: frozenset[str], source_folder: str) -> ProjectSettings:
    """The settings a tool that does not build reads (clean, doctor, report): the project's own,
    or for a buildkit.torch project without a [project] table, those that hold without running
    its setup.py: the build folder and what [tool.buildkit] says, the layout as found in the tree."""
    root = Path(root).resolve()
    data = read_pyproject(root / "pyproject.toml") or {}
    if not uses_drop_in(root) or data.get("project", {}).get("name"):
        return load_settings(root, option_keys)
    name = root.name.replace("-", "_").replace(".", "_")
    facts = SetupFacts(name=name, version="0", layout={}, package=name if name.isidentifier() else "package",
                       py_api=None, source_folder=source_folder)
    return load_drop_in_settings(root, option_keys, facts)
