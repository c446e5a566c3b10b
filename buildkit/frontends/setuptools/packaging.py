"""Steps 6 to 10 of ``buildkit.setup()``: the extensions, the metadata, the layout, setuptools.

The :class:`~buildkit.project.Project` rides on the distribution as
``distribution.buildkit``, where the commands find it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import setuptools
from setuptools import find_packages
from setuptools.dist import Distribution
from setuptools.errors import InvalidConfigError

from buildkit._util import console
from buildkit.builder.toolchain.flags import OsxTarget, osx_target
from buildkit.config.modes import WheelMode
from buildkit.errors import BuildkitError, ConfigError
from buildkit.frontends.setuptools.commands import cmdclass
from buildkit.frontends.setuptools.distribution import BuildkitDistribution
from buildkit.package import setup_cfg_metadata
from buildkit.package.discovery import library_folders, write_package_modules
from buildkit.package.extensions import CMakeBuiltExtension, stub_extension
from buildkit.package.layout import library_only_layout, mode_ext_modules, mode_packages
from buildkit.package.library_tree import fix_library_tree
from buildkit.package.split import library_package, library_staging
from buildkit.package.wheel_root import installed_extension_modules, wheel_dirs_keywords
from buildkit.project import Project

# setup() keyword -> the [project] field it fills; setuptools rejects (or ignores with a
# warning) a value for a field the project declared statically, so buildkit only
# supplies the fields listed in [project] dynamic.
DYNAMIC_FIELDS = {
    "version": "version", "install_requires": "dependencies", "entry_points": "scripts",
    "long_description": "readme", "long_description_content_type": "readme",
}


def call_setuptools(project: Project, overrides: dict[str, Any]) -> Distribution:
    """Steps 6 to 10: the extensions, the metadata, the layout, setuptools."""
    name = (project.settings.library_distribution if project.mode is WheelMode.LIBRARY_ONLY
            else project.settings.project_name)
    long_description, content_type = project.long_description()  # 7
    ext_modules = extensions(project)  # 6
    requirements = project.requirements()
    _refuse_dropped_pins(project, requirements)
    kwargs: dict[str, Any] = dict(
        name=name,
        version=project.version,
        install_requires=requirements,
        ext_modules=ext_modules,
        # 8 (and 10: unmatched rules and installed files the wheel drops are reported by name)
        **wheel_layout(project, [ext.name for ext in ext_modules]),
        entry_points={"console_scripts": project.scripts()},
        long_description=long_description,
        long_description_content_type=content_type,
        cmdclass=cmdclass(),
        distclass=functools.partial(BuildkitDistribution, project=project),
        zip_safe=False,
        # What CMake installed and buildkit's package-data rules are the one source of
        # data files; setuptools' MANIFEST-based inclusion (which setuptools-scm feeds
        # from git, .gitignore included) would add or miss files on its own (and warn
        # about lib/ and include/ looking like packages).
        include_package_data=False,
    )
    for keyword, field_name in DYNAMIC_FIELDS.items():
        if field_name not in project.settings.dynamic:
            kwargs.pop(keyword, None)
    kwargs.update(overrides)
    setup_cfg_metadata.check(project.root, project.settings.project_fields, project.settings.dynamic)
    try:
        distribution: Distribution = setuptools.setup(**kwargs)  # 9 (its stubs give Any for a **kwargs call)
    except (ValueError, InvalidConfigError) as error:
        # setuptools' validation of pyproject.toml and setup.cfg: a mistake in the project's
        # files, said as one error rather than setuptools' traceback.
        if not isinstance(error, InvalidConfigError) and not str(error).startswith("invalid pyproject.toml config"):
            raise
        raise ConfigError(f"setuptools refused the project's metadata: {error}",
                          "Fix the field it names in pyproject.toml's [project] (or setup.cfg); "
                          "https://packaging.python.org/en/latest/specifications/pyproject-toml/ lists each.") from None
    return distribution


def _refuse_dropped_pins(project: Project, requirements: Sequence[str]) -> None:
    """setuptools writes no requirement of its own when [project] does not list `dependencies` as
    dynamic: a pin on what the wheel was built against would vanish without a word."""
    if "dependencies" in project.settings.dynamic:
        return
    own = {*project.settings.dependencies, *project.options.extra_requirements}
    pins = [r for r in requirements if r not in own]
    if pins:
        raise BuildkitError(
            f"The wheel must require {', '.join(pins)} (what it was built against and links at run time), but "
            "[project] does not list `dependencies` in `dynamic`, so that requirement could not be written.",
            'Add "dependencies" to [project] dynamic (move any [project] dependencies to [tool.buildkit] '
            "dependencies), or, for the CUDA runtime, choose cuda-runtime = \"vendor\" or \"system\".")


def extensions(project: Project) -> list[setuptools.Extension]:
    """Step 6: the ``_C`` stub and the CMake-built extension modules, for this mode."""
    stub = stub_extension(project.settings.extension, root=project.root, package_root=project.target.package_root,
                          package_dir=project.target.package_dir, build_type=project.build_type,
                          osx=_osx_target(project), limited_api=project.python_api.limited_api_macro)
    names = [module.name for module in project.settings.cmake_extensions if project.condition(module.when)]
    if project.plan.wheel_root_install:  # every extension module CMake installed is the wheel's
        declared = {module.name for module in project.settings.cmake_extensions} | {stub.name if stub else ""}
        names += [name for name in installed_extension_modules(project.install_manifest, project.target.package_root)
                  if name not in declared]
    built: list[setuptools.Extension] = [CMakeBuiltExtension(name) for name in names]
    return mode_ext_modules(([stub] if stub else []) + built, project.mode)


def _osx_target(project: Project) -> OsxTarget | None:
    if sys.platform != "darwin":
        return None
    options = project.options
    return osx_target(osx_architectures=options.osx_architectures, archflags=options.archflags,
                      host_platform=options.host_platform, sysroot=options.osx_sysroot,
                      deployment_target=options.macosx_deployment_target)


def switched_off(project: Project) -> list[str]:
    """The optional packages whose condition does not hold."""
    return [item.package for item in project.settings.optional_packages if not project.condition(item.when)]


def packages(project: Project) -> list[str]:
    """The layout's top-level packages (and the main one, once the CMake install has made
    its folder) with their subpackages, less the optional ones switched off."""
    layout = project.settings.layout
    left_out = switched_off(project)
    tops = dict.fromkeys([*layout.top_level_packages, project.settings.package.split(".")[0]])
    found = []
    for top in tops:
        folder = project.target.package_root / top if project.target.staged else project.root / layout.folder_of(top)
        if folder.is_dir():
            # A top-level folder without __init__.py is a namespace package; below it,
            # only real packages count (lib/ and include/ hold data, not modules).
            found += [top, *(f"{top}.{sub}" for sub in find_packages(str(folder)))]
    kept = [p for p in found if not any(p == o or p.startswith(o + ".") for o in left_out)]
    return list(mode_packages(kept, project.settings.package, project.mode))


def wheel_layout(project: Project, extension_modules: Sequence[str]) -> dict[str, Any]:
    """Step 8: packages, package_dir and package_data for setuptools, for this wheel mode:
    what the package-data rules select and what CMake installed into the package tree."""
    # Before the first build (a metadata-only step) a folder CMake creates is not there yet.
    files = project.package_files() if project.target.package_dir.is_dir() else []
    shipped = packages(project)
    sorted_files = project.installed_files(shipped, extension_modules, switched_off(project))
    installed = sorted_files.package_data
    main = project.settings.package
    files = sorted({*files, *installed.pop(main, [])})
    if project.mode is WheelMode.LIBRARY_ONLY:
        return library_wheel_layout(project, files)
    layout = {"packages": [*shipped, *sorted_files.root_folders], "package_data": {main: files, **installed},
              "py_modules": list(dict.fromkeys([*project.settings.layout.py_modules, *sorted_files.py_modules]))}
    # A wheel build packages the staging tree, where every top-level package sits in one root.
    package_dir = ({"": os.path.relpath(project.target.package_root, project.root)} if project.target.staged
                   else project.settings.layout.setuptools_package_dir())
    if package_dir:
        layout["package_dir"] = package_dir
    if project.plan.wheel_root_install:
        layout.update(wheel_dirs_keywords(project.install_manifest, project.build_dir, project.root))
    return layout


def library_wheel_layout(project: Project, files: Sequence[str]) -> dict[str, Any]:
    """A library-only wheel: the installed files staged as their own package, fixed for a
    wheel (one copy of each library, relocatable .pc files) when packaging, with the
    modules that tell consumers where they are."""
    package = library_package(project.settings.library_distribution)
    layout = library_only_layout(files, project.target.package_dir, library_staging(project.build_dir), package)
    folder = Path(layout.package_dir[package])
    target = project.target
    if target.staged:  # a wheel build; the develop install is never rewritten
        files, fixes = fix_library_tree(folder, files, [target.configured_prefix, target.install_prefix])
        for line in fixes.describe():
            console.detail(line)
    write_package_modules(folder, package=package, distribution=project.settings.library_distribution,
                          version=project.version, folders=library_folders(files))
    # setuptools insists on package_dir paths relative to setup.py's folder.
    package_dir = {k: os.path.relpath(v, project.root) for k, v in layout.package_dir.items()}
    return {"packages": layout.packages, "package_dir": package_dir, "package_data": {package: sorted(files)}}
