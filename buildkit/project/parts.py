"""The three immutable parts of a :class:`~buildkit.project.Project`, made once per command.

* :class:`Configuration`: what ``[tool.buildkit]``, the environment and the config settings say.
* :class:`WheelPlan`: what the command packages: the wheel mode, whether it makes an sdist,
  how CMake lays out what it installs, the package-data rules.
* :class:`BuildTarget`: where the build goes, chosen when the project is loaded: the project
  itself or a wheel build's staging tree; it owns the install prefix and the package folder.

None of their attributes is assigned after construction: what a command asked for is
decided by its :class:`~buildkit.config.invocation.Invocation` before the project exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildkit._util import console
from buildkit.config.drop_in import SetupFacts, load_drop_in_settings, uses_drop_in
from buildkit.config.modes import InstallPrefix, WheelMode
from buildkit.config.options import BuildOptions, load_options, option_keys
from buildkit.config.settings import ProjectSettings, load_settings
from buildkit.config.without_cmake import check_without_cmake
from buildkit.errors import ConfigError
from buildkit.package.layout import PackageDataRule, default_rules, rules_from_config
from buildkit.package.staging import staging_root


@dataclass(frozen=True)
class Configuration:
    """The project's settings and this command's build options, read and checked once."""

    settings: ProjectSettings
    options: BuildOptions

    @classmethod
    def load(cls, root: Path | str, environ: Mapping[str, str] | None,
             config_settings: Mapping[str, Any]) -> Configuration:
        """A bad value or a mode conflict raises here, before any work (with `cmake = false`, an
        option of a CMake build too)."""
        try:
            settings = load_settings(root, option_keys())
        except ConfigError as error:
            if not uses_drop_in(root):
                raise
            raise ConfigError(
                f"{error.message} {Path(root).resolve() / 'setup.py'} builds with buildkit.torch, so setup.py is "
                "the project's configuration, and this command reads [project] instead.",
                "Build it with `buildkit develop` or `buildkit build`, pip (`pip install --no-build-isolation .`, "
                "`pip wheel --no-build-isolation .`) or `python -m build --no-isolation`; "
                "docs/migration/from-cpp-extension.md.") from None
        options = load_options(settings, environ, config_settings)
        check_without_cmake(settings, options)
        return cls(settings, options)

    @classmethod
    def of_setup_py(cls, root: Path | str, facts: SetupFacts, environ: Mapping[str, str] | None,
                    config_settings: Mapping[str, Any]) -> Configuration:
        """A buildkit.torch project's: what its setup.py said (``facts``), with [tool.buildkit]."""
        settings = load_drop_in_settings(root, option_keys(), facts)
        return cls(settings, load_options(settings, environ, config_settings))


@dataclass(frozen=True)
class WheelPlan:
    """What this command packages, decided from the configuration and the invocation."""

    mode: WheelMode
    # An sdist: a release artifact, so no development label (+git<sha>) in its version and
    # no pins of what the build links (nothing is built against yet).
    for_sdist: bool
    # CMake installs into the wheel's root (scikit-build-core's layout) rather than the
    # package's folder; never for a library-only wheel, which has its own layout, nor without CMake.
    wheel_root_install: bool
    # The project's own package-data rules: only they are expected to match something.
    own_rules: tuple[PackageDataRule, ...]
    # The default rules (what a PyTorch-style tree may hold), then the project's own.
    package_data_rules: tuple[PackageDataRule, ...]

    @classmethod
    def plan(cls, configuration: Configuration, *, for_sdist: bool) -> WheelPlan:
        settings, mode = configuration.settings, configuration.options.wheel_mode
        own = rules_from_config(settings.package_data)
        if settings.install_dir and mode is WheelMode.LIBRARY_ONLY:
            console.info(f"install-dir = {settings.install_dir!r} does not apply to a library-only wheel, which "
                         "installs into the package's folder")
        defaults = default_rules(codegen_package=settings.codegen_package, package=settings.package)
        return cls(mode, for_sdist,
                   wheel_root_install=(settings.install_prefix is InstallPrefix.WHEEL_ROOT and settings.cmake
                                       and mode is not WheelMode.LIBRARY_ONLY),
                   own_rules=own, package_data_rules=(*defaults, *own))


@dataclass(frozen=True)
class BuildTarget:
    """Where this command's build lands: the project itself (develop, editable, ``build_ext
    --inplace``) or, for a wheel build, a staging copy of the package tree under the build
    folder, packaged from there so that the source tree stays as it was."""

    staged: bool
    # In place for an editable wheel (PEP 660), which the front end installs into an environment
    # the build may not run in: its binaries name no folder of the build's environment.
    editable_wheel: bool
    # Where the built package tree is: the project, or the staging tree.
    tree_root: Path
    # Where this build's CMake install goes: the package's folder under the tree root, or the
    # package root in wheel-root mode (its `install-dir` folder when that is set).
    install_prefix: Path
    # The folder that install may write in and whose install manifest and record it keeps: the
    # install prefix, or in wheel-root mode the package root (SKBUILD_PLATLIB_DIR), which holds
    # an install-dir prefix.  Keyed by this folder, a changed install-dir finds the last install's
    # files and removes those it no longer installs.
    install_root: Path
    # CMAKE_INSTALL_PREFIX of the configure: always the project's own, so that develop and
    # wheel builds share one configured build folder (a wheel build installs with --prefix);
    # and the install root of the project's own tree.
    configured_prefix: Path
    configured_root: Path
    # The built package's folder, and the folder of the built top-level packages and modules.
    package_dir: Path
    package_root: Path

    @classmethod
    def choose(cls, settings: ProjectSettings, plan: WheelPlan, *, staged: bool,
               editable_wheel: bool = False) -> BuildTarget:
        layout = settings.layout
        package_folder = layout.folder_of(settings.package)
        root_folder = Path(layout.package_root if plan.wheel_root_install else package_folder)
        prefix_folder = root_folder / settings.install_dir if plan.wheel_root_install else root_folder
        tree_root = staging_root(settings.build_dir) if staged else settings.root
        return cls(staged, editable_wheel, tree_root, install_prefix=tree_root / prefix_folder,
                   install_root=tree_root / root_folder, configured_prefix=settings.root / prefix_folder,
                   configured_root=settings.root / root_folder,
                   package_dir=tree_root / package_folder, package_root=tree_root / layout.package_root)
