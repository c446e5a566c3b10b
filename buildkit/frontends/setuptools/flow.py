"""``buildkit.setup()``: what a consuming project's ``setup.py`` calls.

It runs ten steps in a fixed order (see docs/flow.md):

1. settings and options, mode-conflict check   6. extension configuration
2. base requirements                            7. long description from the README
3. linker-script setup (inside the configure)   8. package_data
4. command-line parsing                         9. ``setuptools.setup``
5. build dependencies (CMake), once            10. what packaging left unmatched

The :class:`~buildkit.project.Project` rides on the distribution as
``distribution.buildkit``, where the commands find it.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Sequence

import setuptools
from setuptools import find_packages

from buildkit.builder.flags import OsxTarget, osx_target
from buildkit.config.modes import WheelMode
from buildkit.config.options import current_config_settings
from buildkit.errors import reporting_errors
from buildkit.frontends import develop_state
from buildkit.frontends.setuptools.commands import cmdclass
from buildkit.frontends.setuptools.distribution import BuildkitDistribution
from buildkit.package.extensions import CMakeBuiltExtension, stub_extension
from buildkit.package.layout import library_only_layout, mode_ext_modules, mode_packages
from buildkit.package.split import library_package
from buildkit.project import Project

# Commands whose work needs the CMake outputs; everything else (egg_info, sdist,
# clean, --help...) must answer without building.
BUILDING_COMMANDS = frozenset({
    "build", "build_ext", "build_clib", "develop", "install", "bdist_wheel", "bdist",
    "bdist_egg", "editable_wheel", "bdist_rpm", "bdist_dumb",
})
HELP_FLAGS = frozenset({"-h", "--help", "--help-commands", "--name", "--version", "--fullname",
                        "--author", "--url", "--license", "--description", "--long-description",
                        "--classifiers", "--keywords", "--requires", "--provides"})

# setup() keyword -> the [project] field it fills; setuptools rejects (or ignores with a
# warning) a value for a field the project declared statically, so buildkit only
# supplies the fields listed in [project] dynamic.
DYNAMIC_FIELDS = {
    "version": "version", "install_requires": "dependencies", "entry_points": "scripts",
    "long_description": "readme", "long_description_content_type": "readme",
}


def needs_build(argv: Sequence[str]) -> bool:
    """Step 4: whether the command line asks for compiled outputs (``--help`` never does)."""
    if any(arg in HELP_FLAGS for arg in argv):
        return False
    return any(arg in BUILDING_COMMANDS for arg in argv)


def setup(**overrides: Any):
    """Run the ten-step flow; ``overrides`` go to ``setuptools.setup`` unchanged."""
    return reporting_errors(lambda: _setup(overrides))


def _setup(overrides: dict[str, Any]):
    root = _project_root()
    handed = develop_state.handed_over(root)
    if handed is not None:  # `buildkit develop` built it, and holds the folder's lock
        return _package(handed, overrides)
    project = Project.load(root, config_settings=current_config_settings())  # 1
    project.requirements()  # 2: a bad requirement stops here, before any build
    if not needs_build(sys.argv[1:]):  # 4 (3 happens inside the driver's configure inputs)
        return _package(project, overrides)
    # One command per build folder at a time, from the CMake build to the last file
    # setuptools writes (the stub, the wheel, the editable registration).
    with project.locked():
        result = project.build()  # 5
        if project.options.cmake_only:
            return result
        project.write_generated_files()
        # Nothing for setuptools to do when the stub and the editable registration
        # are current: skip its machinery, as `buildkit develop` does.
        if sys.argv[1:] == ["develop"] and develop_state.is_current(project, register=True):
            return None
        return _package(project, overrides)


def _package(project: Project, overrides: dict[str, Any]):
    """Steps 6 to 10: the extensions, the metadata, the layout, setuptools."""
    name = (project.settings["library-distribution"] if project.mode is WheelMode.LIBRARY_ONLY
            else project.settings.project_name)
    long_description, content_type = project.long_description()  # 7
    kwargs: dict[str, Any] = dict(
        name=name,
        version=project.version,
        install_requires=project.requirements(),
        ext_modules=extensions(project),  # 6
        **wheel_layout(project),  # 8 (and 10: unmatched rules are reported by name)
        entry_points={"console_scripts": project.scripts()},
        long_description=long_description,
        long_description_content_type=content_type,
        cmdclass=cmdclass(),
        distclass=functools.partial(BuildkitDistribution, project=project),
        zip_safe=False,
        # buildkit's package-data rules are the one source of data files; setuptools'
        # MANIFEST-based inclusion would add files no rule chose (and warn about
        # lib/ and include/ looking like packages).
        include_package_data=False,
    )
    for keyword, field_name in DYNAMIC_FIELDS.items():
        if field_name not in project.settings.dynamic:
            kwargs.pop(keyword, None)
    kwargs.update(overrides)
    return setuptools.setup(**kwargs)  # 9


def extensions(project: Project) -> list[setuptools.Extension]:
    """Step 6: the ``_C`` stub and the CMake-built extension modules, for this mode."""
    stub = stub_extension(project.settings["extension"], root=project.root,
                          package_dir=project.settings.package_dir, build_type=project.build_type,
                          osx=_osx_target(project))
    built = [CMakeBuiltExtension(item["name"]) for item in project.settings["cmake-extensions"]
             if project.condition(item.get("when"))]
    return mode_ext_modules(([stub] if stub else []) + built, project.mode)


def _osx_target(project: Project) -> OsxTarget | None:
    if sys.platform != "darwin":
        return None
    options = project.options
    return osx_target(osx_architectures=options.osx_architectures, archflags=options.archflags,
                      host_platform=options.host_platform, sysroot=options.osx_sysroot,
                      deployment_target=options.macosx_deployment_target)


def packages(project: Project) -> list[str]:
    optional = {item["package"]: item.get("when") for item in project.settings["optional-packages"]}
    top = project.settings.package.split(".")[0]
    found = [p for p in find_packages(str(project.root), include=[top, f"{top}.*"])
             if not any(p == o or p.startswith(o + ".") for o in optional if not project.condition(optional[o]))]
    return list(mode_packages(found, project.settings.package, project.mode))


def wheel_layout(project: Project) -> dict[str, Any]:
    """Step 8: packages, package_dir and package_data for setuptools, for this wheel mode."""
    files = project.package_files()
    if project.mode is WheelMode.LIBRARY_ONLY:
        layout = library_only_layout(files, project.settings.package_dir, project.build_dir / "library-wheel",
                                     library_package(project.settings["library-distribution"]))
        # setuptools insists on package_dir paths relative to setup.py's folder.
        package_dir = {k: os.path.relpath(v, project.root) for k, v in layout.package_dir.items()}
        return {"packages": layout.packages, "package_dir": package_dir, "package_data": layout.package_data}
    return {"packages": packages(project), "package_data": {project.settings.package: files}}


def _project_root() -> Path:
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script and script.name == "setup.py" and script.exists():
        return script.resolve().parent
    return Path.cwd().resolve()
