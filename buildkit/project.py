"""The documented flow: what a consuming project's ``setup.py`` calls.

``buildkit.setup()`` runs ten steps in a fixed order (see docs/flow.md):

1. mode-conflict check            6. extension configuration
2. base requirements              7. long description from the README
3. linker-script setup            8. package_data
4. command-line parsing           9. ``setuptools.setup``
5. build dependencies (CMake)    10. final warnings

A :class:`Project` holds what the steps share; setuptools commands reach it as
``distribution.buildkit``.
"""

from __future__ import annotations

import os
import platform as _platform
import sys
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import console
from .errors import BuildkitError
from .options import BuildOptions, WheelMode, load_options, option_keys
from .settings import ProjectSettings, load_settings

# Commands whose work needs the CMake outputs; everything else (egg_info, sdist,
# clean, --help...) must answer without building.
BUILDING_COMMANDS = frozenset({
    "build", "build_ext", "build_clib", "develop", "install", "bdist_wheel", "bdist",
    "bdist_egg", "editable_wheel", "bdist_rpm", "bdist_dumb",
})
HELP_FLAGS = frozenset({"-h", "--help", "--help-commands", "--name", "--version", "--fullname",
                        "--author", "--url", "--license", "--description", "--long-description",
                        "--classifiers", "--keywords", "--requires", "--provides"})


def needs_build(argv: Sequence[str]) -> bool:
    """Step 4: whether the command line asks for compiled outputs (``--help`` never does)."""
    if any(arg in HELP_FLAGS for arg in argv):
        return False
    return any(arg in BUILDING_COMMANDS for arg in argv)


@dataclass
class Project:
    """Settings, options and build state shared by the steps and the commands."""

    settings: ProjectSettings
    options: BuildOptions
    overrides: Mapping[str, Any] = field(default_factory=dict)
    _driver_result: Any = field(default=None, init=False, repr=False)
    _built: bool = field(default=False, init=False, repr=False)
    _warnings: list[str] = field(default_factory=list, init=False, repr=False)

    # ---------------------------------------------------------------- loading
    @classmethod
    def load(cls, root: Path | str, *, environ: Mapping[str, str] | None = None,
             config_settings: Mapping[str, Any] | None = None, **overrides: Any) -> "Project":
        """Step 1: read settings and options; a mode conflict raises before any work."""
        settings = load_settings(root, option_keys())
        options = load_options(settings, environ, config_settings)
        return cls(settings=settings, options=options, overrides=overrides)

    @property
    def mode(self) -> WheelMode:
        return self.options.wheel_mode

    @property
    def root(self) -> Path:
        return self.settings.root

    @property
    def build_dir(self) -> Path:
        return self.settings.build_dir

    @property
    def install_prefix(self) -> Path:
        return self.settings.package_dir

    # ---------------------------------------------------------------- version
    @cached_property
    def resolved_version(self):
        from .version import resolve_version

        return resolve_version(self.root, build_version=self.options.build_version,
                               build_number=self.options.build_number,
                               version_file=self.settings["version-file"],
                               build_version_var=f"{self.settings.env_prefix}_BUILD_VERSION")

    @property
    def version(self) -> str:
        return self.resolved_version.version

    def write_generated_files(self) -> bool:
        """``<package>/version.py`` and ``_native.py``, each rewritten only when its content changes."""
        from .split import write_native_loader
        from .version import write_version_file

        if self.mode is WheelMode.LIBRARY_ONLY or not self.settings.package_dir.is_dir():
            return False
        cache = self.cache
        extra = {"build_type": self.options.resolve_build_type(
            cache["CMAKE_BUILD_TYPE"].value if cache is not None and "CMAKE_BUILD_TYPE" in cache else None)}
        changed = write_version_file(self.settings.package_dir, self.resolved_version, extra=extra)
        return write_native_loader(self) or changed

    # ------------------------------------------------------------ requirements
    def requirements(self) -> list[str]:
        """Step 2: base requirements, extra ones from the environment, the library pin."""
        from .layout import mode_requirements

        if self.mode is WheelMode.LIBRARY_ONLY:
            return []  # C++ libraries, headers and CMake files: nothing to import, nothing to require
        base = [*self.settings["dependencies"], *self.options.extra_requirements]
        return list(mode_requirements(base, self.mode, self.settings["library-distribution"], self.version))

    # ----------------------------------------------------------- linker script
    def linker_script_defines(self) -> dict[str, str]:
        """Step 3: CMake flags for the prioritized-text linker script, when asked for."""
        from . import linker_script

        linker_script.maybe_recommend(self.options.prioritized_text, _platform.machine(), sys.platform)
        if not self.options.prioritized_text:
            return {}
        symbols = self.root / self.settings["prioritized-text-file"]
        if not symbols.is_file():
            raise BuildkitError(
                f"USE_PRIORITIZED_TEXT_FOR_LD=1 but {symbols} does not exist.",
                "List the hot functions there, one symbol per line, or unset USE_PRIORITIZED_TEXT_FOR_LD.")
        script = linker_script.write_linker_script(symbols, self.build_dir / "linker_script.ld")
        added = linker_script.prioritized_text_flags(True, script)
        return {
            "CMAKE_C_FLAGS": " ".join(added["CFLAGS"]),
            "CMAKE_CXX_FLAGS": " ".join(added["CXXFLAGS"]),
            "CMAKE_SHARED_LINKER_FLAGS": " ".join(added["LDFLAGS"]),
            "CMAKE_EXE_LINKER_FLAGS": " ".join(added["LDFLAGS"]),
        }

    # ------------------------------------------------------------------ build
    def build_lock(self):
        """The build folder's lock, held by a whole command (the driver takes it again)."""
        from .build_lock import lock_build_folder

        return lock_build_folder(self.build_dir)

    def driver(self):
        from .driver import CMakeDriver

        return CMakeDriver(self.settings, self.options, install_prefix=self.install_prefix,
                           extra_defines=self.extra_defines(), prefix_path=self.prefix_path())

    def extra_defines(self) -> dict[str, str]:
        """What buildkit adds to every configure besides the forwarded variables."""
        from .resources import cmake_dir

        from .split import mode_defines

        return {"CMAKE_PROJECT_TOP_LEVEL_INCLUDES": str(cmake_dir() / "BuildkitTopLevel.cmake"),
                **mode_defines(self), **self.linker_script_defines()}

    def prefix_path(self) -> list[str]:
        import sysconfig

        from .split import mode_prefix_path

        return [*mode_prefix_path(self), sysconfig.get_paths()["purelib"]]

    def build(self) -> Any:
        """Step 5: configure if needed, build, install into the package tree (once per process)."""
        if not self._built:
            self._driver_result = self.driver().run()
            self._built = True
        return self._driver_result

    @cached_property
    def cache(self):
        from .cmake_cache import CMakeCache

        return CMakeCache.read_if_exists(self.build_dir / "CMakeCache.txt")

    def condition(self, when: str | None) -> bool:
        from .layout import evaluate_condition

        return True if when is None else evaluate_condition(when, self.cache)

    @property
    def install_manifest(self) -> list[Path]:
        manifest = self.build_dir / "install_manifest.txt"
        if not manifest.is_file():
            return []
        return [Path(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line]

    # ------------------------------------------------------------- extensions
    def extensions(self) -> list[Any]:
        """Step 6: the ``_C`` stub and the CMake-built extension modules, for this mode."""
        from .extensions import cmake_extensions, stub_extension

        if self.mode is WheelMode.LIBRARY_ONLY:
            return []
        stub = stub_extension(self)
        return ([stub] if stub else []) + cmake_extensions(self)

    # ---------------------------------------------------------------- readme
    def long_description(self) -> tuple[str, str]:
        """Step 7: README text and its content type."""
        readme = self.root / self.settings["readme"]
        if not readme.is_file():
            return "", "text/plain"
        kind = {".md": "text/markdown", ".rst": "text/x-rst"}.get(readme.suffix.lower(), "text/plain")
        return readme.read_text(encoding="utf-8"), kind

    # ----------------------------------------------------------- package data
    def packages(self) -> list[str]:
        from .layout import mode_packages
        from setuptools import find_packages

        optional = {item["package"]: item.get("when") for item in self.settings["optional-packages"]}
        top = self.settings.package.split(".")[0]
        found = [p for p in find_packages(str(self.root), include=[top, f"{top}.*"])
                 if not any(p == o or p.startswith(o + ".") for o in optional if not self.condition(optional[o]))]
        return list(mode_packages(found, self.settings.package, self.mode))

    def package_files(self) -> list[str]:
        """Step 8: the files of the package tree that ship, from the rules, the mode and the cache."""
        from .layout import collect_package_data, default_rules, report_unmatched, rules_from_config

        codegen = self.settings["codegen-package"]
        own_rules = rules_from_config(self.settings["package-data"])
        rules = (*default_rules(codegen_package=codegen, package=self.settings.package), *own_rules)
        result = collect_package_data(self.settings.package_dir, rules, self.mode, self.cache)
        if self._built:
            # The defaults cover what a PyTorch-style tree may hold; only the project's own
            # rules are expected to match something.
            report_unmatched(replace(result, unmatched=tuple(r for r in result.unmatched if r in own_rules)))
        return list(result.files)

    def wheel_layout(self) -> dict[str, Any]:
        """packages, package_dir and package_data for setuptools, for this wheel mode."""
        from .layout import library_only_layout

        files = self.package_files()
        if self.mode is WheelMode.LIBRARY_ONLY:
            from .split import library_package

            data_package = library_package(self)
            layout = library_only_layout(files, self.settings.package_dir, self.build_dir / "library-wheel",
                                         data_package)
            # setuptools insists on package_dir paths relative to setup.py's folder.
            package_dir = {k: os.path.relpath(v, self.root) for k, v in layout.package_dir.items()}
            return {"packages": layout.packages, "package_dir": package_dir,
                    "package_data": layout.package_data}
        return {"packages": self.packages(), "package_data": {self.settings.package: files}}

    def scripts(self) -> list[str]:
        if self.mode is WheelMode.LIBRARY_ONLY:
            return []
        return [f"{s['name']} = {s['target']}" for s in self.settings["scripts"] if self.condition(s.get("when"))]

    def warn_later(self, message: str) -> None:
        self._warnings.append(message)

    def final_warnings(self) -> None:
        """Step 10: what the user should know, after setuptools' own output."""
        for message in self._warnings:
            console.boxed("buildkit", message)


def setup(**overrides: Any):
    """Run the ten-step flow; ``overrides`` go to ``setuptools.setup`` unchanged."""
    from .commands.errors import run_reporting_errors

    return run_reporting_errors(lambda: _setup(overrides))


def _setup(overrides: dict[str, Any]):
    from .options import current_config_settings

    root = _project_root()
    project = Project.load(root, config_settings=current_config_settings(), **overrides)  # 1
    requirements = project.requirements()  # 2
    if not needs_build(sys.argv[1:]):  # 4 (3 happens inside the driver's configure inputs)
        return _package(project, requirements)
    # One command per build folder at a time, from the CMake build to the last file
    # setuptools writes (the stub, the wheel, the editable registration).
    with project.build_lock():
        result = project.build()  # 5
        if project.options.cmake_only:
            return result
        project.__dict__.pop("cache", None)  # re-read: the configure may have changed it
        project.write_generated_files()
        if sys.argv[1:] == ["develop"]:
            from . import develop_loop

            # Nothing for setuptools to do when the stub and the editable registration
            # are current: skip its machinery, as `buildkit develop` does.
            if develop_loop.is_current(project, register=True):
                return None
        return _package(project, requirements)


def _package(project: Project, requirements: list[str]):
    """Steps 6 to 10: the extensions, the metadata, the layout, setuptools."""
    ext_modules = project.extensions()  # 6
    long_description, content_type = project.long_description()  # 7
    layout = project.wheel_layout()  # 8
    dist = _call_setuptools(project, requirements, ext_modules, long_description, content_type, layout)  # 9
    project.final_warnings()  # 10
    return dist


def _call_setuptools(project: Project, requirements, ext_modules, long_description, content_type, layout):
    import setuptools

    from .commands import cmdclass
    from .commands.distribution import BuildkitDistribution

    name = (project.settings["library-distribution"] if project.mode is WheelMode.LIBRARY_ONLY
            else project.settings.project_name)
    kwargs: dict[str, Any] = dict(
        name=name,
        version=project.version,
        install_requires=requirements,
        ext_modules=ext_modules,
        **layout,
        entry_points={"console_scripts": project.scripts()},
        long_description=long_description,
        long_description_content_type=content_type,
        cmdclass=cmdclass(),
        distclass=BuildkitDistribution,
        zip_safe=False,
        # buildkit's package-data rules are the one source of data files; setuptools'
        # MANIFEST-based inclusion would add files no rule chose (and warn about
        # lib/ and include/ looking like packages).
        include_package_data=False,
    )
    _drop_static_fields(kwargs, project.settings.dynamic)
    kwargs.update(project.overrides)
    BuildkitDistribution.pending_project = project
    return setuptools.setup(**kwargs)


# setup() keyword -> the [project] field it fills; setuptools rejects (or ignores with a
# warning) a value for a field the project declared statically, so buildkit only
# supplies the fields listed in [project] dynamic.
DYNAMIC_FIELDS = {
    "version": "version", "install_requires": "dependencies", "entry_points": "scripts",
    "long_description": "readme", "long_description_content_type": "readme",
}


def _drop_static_fields(kwargs: dict[str, Any], dynamic: frozenset[str]) -> None:
    for keyword, field_name in DYNAMIC_FIELDS.items():
        if field_name not in dynamic:
            kwargs.pop(keyword, None)


def _project_root() -> Path:
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script and script.name == "setup.py" and script.exists():
        return script.resolve().parent
    return Path.cwd()
