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
from typing import TYPE_CHECKING

from .errors import BuildkitError
from .fileutil import write_text_if_changed
from .layout import WheelMode
from .resources import templates_dir

if TYPE_CHECKING:
    from .project import Project


def library_package(project: "Project") -> str:
    """The top-level folder a library-only wheel installs (``libfoo``)."""
    return project.settings["library-distribution"].replace("-", "_").replace(".", "_")


def installed_library_prefix(project: "Project") -> Path:
    """Where the installed library distribution keeps lib/, include/ and share/cmake/."""
    from importlib import metadata

    dist = project.settings["library-distribution"]
    wanted = project.version
    hint = (f"Build and install it first (`{project.settings['library-only-variable']}=1 python -m build --wheel` "
            f"then `pip install dist/{dist}-*.whl`), or `pip install '{dist}=={wanted}'`.")
    try:
        installed = metadata.version(dist)
    except metadata.PackageNotFoundError:
        raise BuildkitError(f"The python-only build links against the C++ libraries of {dist}, "
                            "which is not installed in this environment.", hint) from None
    if installed != wanted:
        raise BuildkitError(f"The python-only build of {wanted} needs {dist}=={wanted}, but {dist} {installed} "
                            "is installed.", hint)
    spec = importlib.util.find_spec(library_package(project))
    if spec is None or not spec.submodule_search_locations:
        raise BuildkitError(f"{dist} {installed} is installed but its `{library_package(project)}` folder is missing.",
                            f"Reinstall it: pip install --force-reinstall '{dist}=={wanted}'.")
    return Path(list(spec.submodule_search_locations)[0])


def mode_defines(project: "Project") -> dict[str, str]:
    """CMake variables that tell the project which part of it to build."""
    defines = {"BUILDKIT_WHEEL_MODE": project.mode.value}
    if project.mode is WheelMode.PYTHON_ONLY:
        defines["BUILDKIT_LIBRARY_PREFIX"] = str(installed_library_prefix(project))
    return defines


def mode_prefix_path(project: "Project") -> list[str]:
    """CMAKE_PREFIX_PATH entries for this mode: the library distribution's CMake config."""
    if project.mode is WheelMode.PYTHON_ONLY:
        return [str(installed_library_prefix(project))]
    return []


def write_native_loader(project: "Project") -> bool:
    """``<package>/_native.py`` from the template, when the project lists libraries to preload."""
    preload = project.settings["preload-libraries"]
    if not preload or project.mode is WheelMode.LIBRARY_ONLY or not project.settings.package_dir.is_dir():
        return False
    template = Template((templates_dir() / "native_loader.py.in").read_text(encoding="utf-8"))
    text = template.substitute(
        package=project.settings.package, library_distribution=project.settings["library-distribution"],
        package_repr=repr(project.settings.package),
        library_distribution_repr=repr(project.settings["library-distribution"]),
        library_package_repr=repr(library_package(project)), version_repr=repr(project.version),
        preload_repr=repr(list(preload)))
    return write_text_if_changed(project.settings.package_dir / "_native.py", text)
