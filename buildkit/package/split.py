"""What the library-only / python-only split needs beyond package_data.

A python-only build compiles only the bindings, against the C++ libraries and
CMake config of the installed library distribution, which it finds through that
distribution (never a hand-typed path). At run time the package's generated
``_native.py`` preloads those libraries from the same place.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from string import Template
from typing import Sequence

from buildkit._util.resources import templates_dir
from buildkit.config.modes import WheelMode
from buildkit.errors import BuildkitError
from buildkit.package.generated import write_generated_file

NATIVE_LOADER = "_native.py"
NATIVE_LOADER_ELSEWHERE = (f"rename your module (buildkit writes {NATIVE_LOADER} to preload the libraries listed in "
                           "`[tool.buildkit] preload-libraries`), or remove that setting")


def library_staging(build_dir: Path) -> Path:
    """Where a library-only wheel's package is staged (it is packed from there)."""
    return Path(build_dir) / "library-wheel"


def library_package(library_distribution: str) -> str:
    """The top-level folder a library-only wheel installs (``libfoo``)."""
    return library_distribution.replace("-", "_").replace(".", "_")


def installed_library_prefix(library_distribution: str, version: str, *, mode_variable: str) -> Path:
    """Where the installed library distribution keeps lib/, include/ and share/cmake/."""
    dist, wanted = library_distribution, version
    hint = (f"Build and install it first (`{mode_variable}=1 python -m build --wheel` "
            f"then `pip install dist/{dist}-*.whl`), or `pip install '{dist}=={wanted}'`.")
    # importlib.metadata costs ~9 ms to import; only python-only builds get here.
    from importlib import metadata

    try:
        installed = metadata.version(dist)
    except metadata.PackageNotFoundError:
        raise BuildkitError(f"The python-only build links against the C++ libraries of {dist}, "
                            "which is not installed in this environment.", hint) from None
    if installed != wanted:
        raise BuildkitError(f"The python-only build of {wanted} needs {dist}=={wanted}, but {dist} {installed} "
                            "is installed.", hint)
    folder = library_package(dist)
    spec = importlib.util.find_spec(folder)
    if spec is None or not spec.submodule_search_locations:
        raise BuildkitError(f"{dist} {installed} is installed but its `{folder}` folder is missing.",
                            f"Reinstall it: pip install --force-reinstall '{dist}=={wanted}'.")
    return Path(list(spec.submodule_search_locations)[0])


def mode_defines(mode: WheelMode, library_prefix: Path | None) -> dict[str, str]:
    """CMake variables that tell the project which part of it to build."""
    defines = {"BUILDKIT_WHEEL_MODE": mode.value}
    if library_prefix is not None:
        defines["BUILDKIT_LIBRARY_PREFIX"] = str(library_prefix)
    return defines


def write_native_loader(package_dir: Path, *, package: str, library_distribution: str, version: str,
                        preload: Sequence[str]) -> bool:
    """``<package>/_native.py`` from the template, when the project lists libraries to preload."""
    if not preload:
        return False
    template = Template((templates_dir() / "native_loader.py.in").read_text(encoding="utf-8"))
    text = template.substitute(
        package=package, library_distribution=library_distribution,
        package_repr=repr(package), library_distribution_repr=repr(library_distribution),
        library_package_repr=repr(library_package(library_distribution)), version_repr=repr(version),
        preload_repr=repr(list(preload)))
    return write_generated_file(package_dir / NATIVE_LOADER, text, elsewhere=NATIVE_LOADER_ELSEWHERE)
