"""What the library-only / python-only split needs beyond package_data.

A python-only build compiles only the bindings, against the C++ libraries and
CMake config of the installed library distribution: a library dependency
(:mod:`buildkit.package.dependencies`) on the project's own library distribution at
exactly its version. At run time the package's generated ``_native.py`` checks and
preloads those libraries, and those of every other library dependency.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from pprint import pformat
from string import Template
from typing import Any

from buildkit._util import console
from buildkit._util.resources import templates_dir
from buildkit.config.modes import VersionPolicy, WheelMode
from buildkit.config.settings import LibraryDependency
from buildkit.package.generated import remove_generated_file, write_generated_file

NATIVE_LOADER = "_native.py"
NATIVE_LOADER_ELSEWHERE = (f"rename your module (buildkit writes {NATIVE_LOADER} to preload the libraries listed in "
                           "`[tool.buildkit] preload-libraries`), or remove that setting")


def library_staging(build_dir: Path) -> Path:
    """Where a library-only wheel's package is staged (it is packed from there)."""
    return Path(build_dir) / "library-wheel"


def library_package(library_distribution: str) -> str:
    """The top-level folder a library-only wheel installs (``libfoo``)."""
    return library_distribution.replace("-", "_").replace(".", "_")


def python_only_dependency(library_distribution: str) -> LibraryDependency:
    """The python-only wheel's one library dependency: the project's own library distribution,
    at exactly the project's version (the build checks it is the one installed)."""
    return LibraryDependency(distribution=library_distribution, version=VersionPolicy.EXACT)


def python_only_hint(library_distribution: str, version: str, *, mode_variable: str) -> str:
    return (f"Build and install it first (`{mode_variable}=1 python -m build --wheel` "
            f"then `pip install dist/{library_distribution}-*.whl`), "
            f"or `pip install '{library_distribution}=={version}'`.")


def mode_defines(mode: WheelMode, library_prefix: Path | None) -> dict[str, str]:
    """CMake variables that tell the project which part of it to build."""
    defines = {"BUILDKIT_WHEEL_MODE": mode.value}
    if library_prefix is not None:
        defines["BUILDKIT_LIBRARY_PREFIX"] = str(library_prefix)
    return defines


def write_native_loader(package_dir: Path, *, package: str, library_distribution: str, version: str,
                        preload: Sequence[str], dependencies: Sequence[Mapping[str, Any]] = ()) -> bool:
    """``<package>/_native.py`` from the template, when the project lists libraries to preload
    or links other distributions' libraries (``dependencies``: the loader table of
    :func:`buildkit.package.dependencies.loader_table`)."""
    if not preload and not dependencies:
        return withdraw_native_loader(package_dir)
    text = native_loader_text(package=package, library_distribution=library_distribution, version=version,
                              preload=preload, dependencies=dependencies)
    return write_generated_file(package_dir / NATIVE_LOADER, text, elsewhere=NATIVE_LOADER_ELSEWHERE)


def native_loader_text(*, package: str, library_distribution: str, version: str, preload: Sequence[str],
                       dependencies: Sequence[Mapping[str, Any]]) -> str:
    """The generated loader's source: ``_native.py``, and the code of an editable install's
    preload hook (:func:`buildkit.frontends.editable.preload_hook_files`)."""
    template = Template((templates_dir() / "native_loader.py.in").read_text(encoding="utf-8"))
    return template.substitute(
        package=package, library_distribution=library_distribution,
        package_repr=repr(package), library_distribution_repr=repr(library_distribution),
        library_package_repr=repr(library_package(library_distribution)), version_repr=repr(version),
        preload_repr=repr(list(preload)), dependencies_repr=pformat(list(dependencies), width=100),
        library_dependencies=", ".join(d["distribution"] for d in dependencies) or "none")


def withdraw_native_loader(package_dir: Path) -> bool:
    """Remove the ``_native.py`` an earlier build wrote, when this one links no other
    distribution's libraries and preloads none (a library dependency whose ``when`` no longer
    holds): left in place it would preload, or require, what this build does not link."""
    removed = remove_generated_file(package_dir / NATIVE_LOADER)
    if removed:
        console.info(f"removed {package_dir / NATIVE_LOADER}, which an earlier build wrote: this build links no "
                     "other distribution's libraries and preloads none")
    return removed
