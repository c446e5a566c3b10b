"""A project's configuration, wheel plan, build target and build state, shared by every front end.

A :class:`Project` is loaded once per command (``setup.py``, a PEP 517 hook, the
CLI), for that command's invocation.  Its three parts (:mod:`.parts`) are made then and
never change; only the build's progress does.  It runs the CMake driver at most once,
and answers what the packaging steps need (version, requirements, package files,
scripts) from the parts and the CMake cache.  It knows nothing of setuptools: the
front ends turn its answers into their own calls.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from buildkit._util import console
from buildkit.builder.build_folder import claim_build_folder, lock_own_build_folder, prepare_build_type_folder
from buildkit.builder.configure import build_env, file_api
from buildkit.builder.configure.cmake_cache import BuildFolderCache, CMakeCache
from buildkit.builder.driver import CMakeDriver, DriverResult, resolved_build_type
from buildkit.builder.toolchain.cuda_toolkit import CudaRequest, ToolkitChoice, choose_toolkit, cuda_request
from buildkit.config.conditions import evaluate_condition
from buildkit.config.invocation import DEFAULT_INVOCATION, Invocation
from buildkit.config.modes import WheelMode
from buildkit.config.options import BuildOptions
from buildkit.config.settings import ProjectSettings
from buildkit.errors import BuildFailedError
from buildkit.package.dependencies import FoundDependency
from buildkit.package.generated import refuse_user_file
from buildkit.package.installed import InstalledFiles, PackageTree, sort_installed
from buildkit.package.installed import report as report_installed
from buildkit.package.installed import write_report as write_installed_report
from buildkit.package.layout import collect_package_data, report_unmatched
from buildkit.package.links import LinkGuard
from buildkit.package.python_api import PythonApi
from buildkit.package.python_api import for_this_interpreter as python_api_for
from buildkit.package.setup_cfg_metadata import refuse_crashing_readme
from buildkit.package.split import NATIVE_LOADER, NATIVE_LOADER_ELSEWHERE
from buildkit.package.staging import data_sources, source_files, sync_sources
from buildkit.package.version import VERSION_MODULE_ELSEWHERE, ResolvedVersion, resolve_version
from buildkit.project import build_types, cmake_inputs, linking
from buildkit.project.build_folders import BuildFolders
from buildkit.project.library_conditions import Decision
from buildkit.project.parts import BuildTarget, Configuration, WheelPlan


@dataclass
class _CommandProgress:
    """What this command's build has done so far: the one part of a Project that changes."""

    result: DriverResult | None = None
    holding_lock: bool = False
    # A wheel build's Python sources, copied into the staging tree before CMake's install.
    staged_sources: dict[str, Path] = field(default_factory=dict)
    # NVIDIA's runtime wheel, as the built binaries need it: decided (and said) once built.
    cuda_runtime: list[FoundDependency] | None = None


@dataclass(frozen=True)
class Project:
    """A command's configuration, wheel plan and build target, and its build's progress."""

    configuration: Configuration
    plan: WheelPlan
    target: BuildTarget
    _progress: _CommandProgress = field(default_factory=_CommandProgress, init=False, repr=False, compare=False)

    @classmethod
    def load(cls, root: Path | str, *, environ: Mapping[str, str] | None = None,
             invocation: Invocation = DEFAULT_INVOCATION) -> Project:
        """Read settings and options for ``invocation``, which also says where the build goes
        and whether it makes an sdist; a bad value or a mode conflict raises before any work."""
        configuration = Configuration.load(root, environ, invocation.config_settings)
        return cls.of(configuration, staged=invocation.staged, for_sdist=invocation.for_sdist,
                      editable_wheel=invocation.editable_wheel)

    @classmethod
    def of(cls, configuration: Configuration, *, staged: bool = False, for_sdist: bool = False,
           editable_wheel: bool = False) -> Project:
        """The project of a configuration already read: built in place unless ``staged``."""
        plan = WheelPlan.plan(configuration, for_sdist=for_sdist)
        return cls(configuration, plan, BuildTarget.choose(configuration.settings, plan, staged=staged,
                                                           editable_wheel=editable_wheel))

    # The configuration's and the plan's most asked-for answers.
    @property
    def settings(self) -> ProjectSettings:
        return self.configuration.settings

    @property
    def options(self) -> BuildOptions:
        return self.configuration.options

    @property
    def mode(self) -> WheelMode:
        return self.plan.mode

    @property
    def root(self) -> Path:
        return self.settings.root

    @property
    def build_dir(self) -> Path:
        return self.settings.build_dir

    # ---------------------------------------------------------------- version
    @cached_property
    def resolved_version(self) -> ResolvedVersion:
        if self.settings.static_version is not None:
            # [project] version is written out: setuptools puts it in the metadata as it is.
            return ResolvedVersion(self.settings.static_version, None, "[project] version")
        return resolve_version(self.root, build_version=self.options.build_version,
                               build_number=self.options.build_number,
                               version_file=self.settings.version_file,
                               build_version_var=self.options.release_variable, git_label=not self.plan.for_sdist)

    @property
    def version(self) -> str:
        return self.resolved_version.version

    @property
    def build_type(self) -> str:
        return resolved_build_type(self.options, self._cache_file)

    def write_generated_files(self) -> bool:
        """The version module and ``_native.py``, each rewritten only when it changes (:mod:`.linking`)."""
        return linking.write_generated_files(self)

    # ------------------------------------------- what the build links (:mod:`.linking`)
    def requirements(self) -> list[str]:
        return linking.requirements(self)

    @cached_property
    def library_decision(self) -> Decision:
        """Which library dependencies this build links: decided once, before its configure."""
        return Decision.before_configure(self.settings, self.options, self._cache_file.readable_entries())

    @cached_property
    def declared_dependencies(self) -> list[FoundDependency]:
        """Looked up once per command: ``requirements()`` and the loader both ask."""
        return linking.declared_dependencies(self)

    @cached_property
    def library_dependencies(self) -> list[FoundDependency]:
        return linking.library_dependencies(self)

    def cuda_runtime(self) -> list[FoundDependency]:
        """Once built, decided once: the requirement and the loader both ask (:func:`.linking.cuda_runtime`)."""
        if not self.built:
            return []
        if self._progress.cuda_runtime is None:
            self._progress.cuda_runtime = linking.cuda_runtime(self)
        return self._progress.cuda_runtime

    def runtime_dependencies(self) -> list[FoundDependency]:
        return linking.runtime_dependencies(self)

    def writes_native_loader(self) -> bool:
        return linking.writes_native_loader(self)

    def editable_preload_loader(self) -> str:
        return linking.editable_preload_loader(self)

    @cached_property
    def linked_sonames(self) -> set[str]:
        """Read once, after the build."""
        return linking.linked_sonames(self)

    @property
    def cuda_toolkit(self) -> str | None:
        """The CUDA compiler's version the build configured with; None without CUDA.  The cache
        (already read) says whether CUDA is on, so a CPU build's no-op never opens the File API reply."""
        cache = self.cache
        if cache is None or not cache.get_value("CMAKE_CUDA_COMPILER"):
            return None
        return file_api.compiler_version(self.build_dir, "CUDA") or None

    @property
    def library_prefix(self) -> Path | None:
        """The installed library distribution a python-only build links against."""
        return self.library_dependencies[0].prefix_path if self.mode is WheelMode.PYTHON_ONLY else None

    @cached_property
    def cuda_request(self) -> CudaRequest:
        """What the project asks of CUDA: whether it compiles CUDA (its CMakeLists or cache says so,
        or it builds against a CUDA build of torch), and that torch's CUDA."""
        # Before the configure: a damaged cache is the configure's to name (and start from scratch).
        return cuda_request(self._cache_file.readable_entries(), self.settings.source_dir / "CMakeLists.txt",
                            self.options.defines(), drop_in=bool(self.settings.generated_source))

    @cached_property
    def cuda_toolkit_choice(self) -> ToolkitChoice:
        """The CUDA toolkit this build compiles with (``cuda-toolkit``), for a project that compiles
        CUDA (:attr:`cuda_request`); a toolkit from NVIDIA's wheels is mirrored with the build
        environment."""
        request = self.cuda_request
        if not request.compiles_cuda:
            return ToolkitChoice(None)
        choice = choose_toolkit(self.options.cuda_toolkit, self.options, self.build_environment.site_dirs, request)
        if choice.toolkit is not None and choice.from_wheels:
            if choice.toolkit.runtime_root is not None:  # first: its files win in the merged mirror
                self.build_environment.add_toolkit(choice.toolkit.runtime_root)
            self.build_environment.add_toolkit(choice.toolkit.root)
        return choice

    @cached_property
    def python_api(self) -> PythonApi:
        """What ``py-api`` gives under this interpreter (the stable ABI, or its own tags)."""
        return python_api_for(self.settings.py_api)

    @cached_property
    def build_environment(self) -> build_env.BuildEnvironment:
        """The environment this build runs in (pip's isolated one, not the target's) and its
        CMake packages, mirrored into the build folder."""
        return build_env.scan(self.build_dir, self.root)

    def driver(self, build_type: str | None = None) -> CMakeDriver:
        """The build of the primary build type; with ``build_type``, the build of one of a
        build-type list's others, in its own folder (:mod:`.build_types`)."""
        if build_type is None:
            options, build_dir, cache = self.options, self.build_dir, self._cache_file
        else:
            options, build_dir = build_types.options_for(self.options, build_type), self._folders.of_types[build_type]
            cache = BuildFolderCache(build_dir)
        return CMakeDriver(self.settings, options, install_prefix=self.target.install_prefix,
                           install_root=self.target.install_root, configured_prefix=self.target.configured_prefix,
                           extra_defines=self._driver_defines, prefix_path=cmake_inputs.prefix_path(self),
                           module_path=self.build_environment.module_path(), build_dir=build_dir, cache=cache,
                           manifests=self._folders.manifests[build_dir], develop=not self.target.staged,
                           listed_type=build_type,
                           configure_notes=[note] if (note := self.cuda_toolkit_choice.note) else [])

    @cached_property
    def _driver_defines(self) -> dict[str, str]:
        """What buildkit adds to the configure (:mod:`.cmake_inputs`), once for every driver of the
        command (each build type's)."""
        return cmake_inputs.extra_defines(self)

    @cached_property
    def _folders(self) -> BuildFolders:
        return BuildFolders(self.build_dir, self.options.extra_build_types, self.target.install_root)

    # ------------------------------------------------------------------ build
    def claim_build_folder(self) -> None:
        """Make the build folder buildkit's before the first file is written there
        (``builder/build_folder.py``); a build does it when it takes the folder's lock."""
        claim_build_folder(self.build_dir, self.settings.root, self.settings.project_folders)

    @contextmanager
    def locked(self) -> Iterator[Project]:
        """Hold the build folder's lock for a whole command: the build and what packages it."""
        if self._progress.holding_lock:
            raise RuntimeError(f"the lock of {self.build_dir} is already held by this command")
        with lock_own_build_folder(self.build_dir, self.settings.root, self.settings.project_folders):
            self._progress.holding_lock = True
            try:
                yield self
            finally:
                self._progress.holding_lock = False

    def build(self) -> DriverResult:
        """Configure if needed, build, install into the package tree: once per Project."""
        if self._progress.result is None:
            if self._progress.holding_lock:
                self._progress.result = self._run_build()
            else:
                with self.locked():
                    self._progress.result = self._run_build()
            self._cache_file.forget()  # ninja may have run CMake again to regenerate the build
        return self._progress.result

    def _refuse_user_files(self) -> None:
        """Before a build that may take minutes: a hand-written file where buildkit would write
        its own, or setup.cfg metadata setuptools would stop on, stops it now, not after the build."""
        refuse_crashing_readme(self.root, self.settings.project_fields, self.settings.dynamic)
        if self.mode is WheelMode.LIBRARY_ONLY:
            return
        folder = self.settings.package_dir  # the source tree's: a wheel build stages from there
        if self.settings.version_module:
            refuse_user_file(folder / self.settings.version_module, elsewhere=VERSION_MODULE_ELSEWHERE)
        if linking.writes_native_loader(self):
            refuse_user_file(folder / NATIVE_LOADER, elsewhere=NATIVE_LOADER_ELSEWHERE)

    def _run_build(self) -> DriverResult:
        self._refuse_user_files()
        if self.target.staged:  # the Python sources first: what CMake installs goes on top
            develop_outputs = self._folders.installed_names(self.target.configured_root)
            self._progress.staged_sources = source_files(self.root, self.settings.layout, develop_outputs,
                                                links=self.link_guard(self.root))
            staged_installs = self._folders.installed_names(self.target.install_root)
            sync_sources(self._progress.staged_sources, self.target.tree_root, staged_installs)
        if not self.settings.cmake:
            console.info("no CMake build ([tool.buildkit] cmake = false): the Python side only")
            return DriverResult.without_cmake()
        decided = self.library_decision  # before the configure reads it
        primary = self.driver()  # chooses the CUDA toolkit, which the mirror may hold
        build_env.sync_mirror(self.build_environment, self.build_dir)
        if note := self.options.dropped_build_types_note():
            console.warn(note)
        try:
            result = primary.run(lock_held=True)
        except BuildFailedError as failure:  # a configure that went without a library it links fails first
            self._cache_file.forget()
            decided.check_after_configure(self._cache_file.readable_entries(), failure)
            raise
        self._cache_file.forget()
        decided.check_after_configure(self.cache)
        installs = [primary.installer()]
        for build_type, folder in self._folders.of_types.items():
            console.detail(f"building the build type {build_type} too ([tool.buildkit] build-type), in {folder}")
            prepare_build_type_folder(folder)
            extra = self.driver(build_type)
            extra.run(lock_held=True)
            installs.append(extra.installer())
        if not result.cmake_only:
            build_types.report_overwritten(installs)
            built = [self.build_dir, *self._folders.of_types.values()]
            build_types.withdraw_unbuilt(self.build_dir, self.target.install_prefix, self.target.install_root,
                                         list(self._folders.of_types),
                                         set(self._folders.installed_names(self.target.install_root, built)))
        return result

    @property
    def built(self) -> bool:
        return self._progress.result is not None

    @property
    def stopped_after_configure(self) -> bool:
        """Whether this command's build stopped after CMake's configure (``CMAKE_ONLY=1``): nothing
        was built or installed, so nothing may be packaged or registered."""
        return self._progress.result is not None and self._progress.result.cmake_only

    @cached_property
    def _cache_file(self) -> BuildFolderCache:
        return BuildFolderCache(self.build_dir)

    @property
    def cache(self) -> CMakeCache | None:
        return self._cache_file.entries()

    def condition(self, when: str | None) -> bool:
        return True if when is None else evaluate_condition(when, self.cache)

    @property
    def install_manifest(self) -> list[Path]:
        """What this command's install (into the package tree, or the staging tree) wrote: of
        every build type's folder (a type the build did not build has had its files withdrawn)."""
        return self._folders.installed()

    @property
    def installed_names(self) -> list[str]:
        """:attr:`install_manifest` as strings, for passes over every installed file."""
        return self._folders.installed_names(self.target.install_root)

    @property
    def every_installed_file(self) -> list[Path]:
        """What any install from this build folder wrote (the source tree's and staging's)."""
        return self._folders.every_installed_file()

    # ----------------------------------------------------------- package data
    def package_files(self) -> list[str]:
        """The files of the package tree that the package-data rules select, for the mode and the cache."""
        own_rules = self.plan.own_rules
        result = collect_package_data(self.target.package_dir, self.plan.package_data_rules, self.mode, self.cache,
                                      links=self.link_guard(self.target.tree_root))
        if self.built:
            # The defaults cover what a PyTorch-style tree may hold; only the project's own
            # rules are expected to match something.
            report_unmatched(replace(result, unmatched=tuple(r for r in result.unmatched if r in own_rules)))
        return list(result.files)

    def installed_files(self, packages: Sequence[str], extension_modules: Collection[str],
                        switched_off: Collection[str]) -> InstalledFiles:
        """What becomes of each file this command's install wrote into the package tree, given
        the packages and extension modules the wheel ships.  A wheel build reports the files
        it drops by name and records them for `buildkit wheels`."""
        target = self.target
        tree = PackageTree(target.package_root, self.settings.package, target.package_dir, packages,
                           extension_modules, switched_off)
        candidates = self.installed_names
        # A wheel with Python packages ships their folders' data files too (a library-only wheel has none).
        if self._progress.staged_sources and self.mode is not WheelMode.LIBRARY_ONLY:
            data, ignored = data_sources(self._progress.staged_sources, self.settings.layout, target.tree_root,
                                         packages, self.root)
            candidates = list(dict.fromkeys([*map(str, data), *candidates]))
            for path in ignored:
                console.detail(f"left out of the wheel: {path} (.gitignore names it)")
        result = sort_installed(candidates, tree, rules=self.plan.package_data_rules, mode=self.mode,
                                cache=self.cache, wheel_exclude=self.settings.wheel_exclude,
                                links=self.link_guard(target.tree_root))
        if self.built and target.staged:
            report_installed(result)
            write_installed_report(self.build_dir, result)
        return result

    def link_guard(self, names_from: Path) -> LinkGuard:
        """The check of the links below ``names_from`` (the project, or the staging tree laid out
        like it): each must lead into the project or the tree being packaged (what CMake installed
        there), unless [tool.buildkit] allow-outside-links names it."""
        return LinkGuard(names_from, list(dict.fromkeys([self.root, self.target.tree_root])),
                         self.settings.allow_outside_links)

    def scripts(self) -> list[str]:
        if self.mode is WheelMode.LIBRARY_ONLY:
            return []
        return [f"{script.name} = {script.target}" for script in self.settings.scripts if self.condition(script.when)]

    def long_description(self) -> tuple[str, str]:
        """README text and its content type."""
        readme = self.root / self.settings.readme
        self.link_guard(self.root).check_path(readme)
        if not readme.is_file():
            return "", "text/plain"
        kind = {".md": "text/markdown", ".rst": "text/x-rst"}.get(readme.suffix.lower(), "text/plain")
        return readme.read_text(encoding="utf-8"), kind
