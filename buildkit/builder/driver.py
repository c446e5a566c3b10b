"""Configure, build and install one CMake build folder, doing as little as possible.

:meth:`CMakeDriver.run` takes the folder's lock, configures only when needed, builds,
installs into the package tree and copies ``compile_commands.json`` to the project.

* Configure inputs (forwarded ``-D`` values, CMAKE_ARGS, generator, build type, tools
  and versions, CMake's environment variables, launcher, CUDA architectures, install
  prefix, prefix path, Python) are recorded in ``.buildkit/configure.json`` after a
  successful configure and deleted before one, so an interrupted configure runs again;
  each changed input is named.  Only what CMake reads into a new cache alone (the
  generator, toolchain file, source folder, and the compiler of a language the cache
  already enabled) forces a fresh configure.
* ``CMAKE_PREFIX_PATH`` and ``CMAKE_MODULE_PATH`` come from the caller: the build
  environment's site-packages and entry points, its CMake packages mirrored into the
  build folder first (:mod:`buildkit.builder.configure.build_env`).
* A new Python reconfigures with ``-U`` patterns that drop FindPython's cached
  results, instead of deleting the cache: every other entry and object file stays.
* The tools are recorded at configure and reused without starting them until
  :func:`buildkit.builder.toolchain.tools.check_record` says one is gone or changed (a ninja from a
  deleted pip build environment); then they are found again and CMake reconfigured.
* ninja is run directly for the Ninja generator: ``cmake --build`` only starts it,
  and skipping cmake halves a no-op build (0.01 s instead of 0.022 s).
* The install copies only what changed since the last install into the same prefix,
  rule by rule (:mod:`buildkit.builder.install.step`); CMake is not started when
  nothing did.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from buildkit._util import console
from buildkit._util.fileutil import read_json as _read_json
from buildkit._util.fileutil import write_json as _write_json
from buildkit.builder.build_folder import lock_own_build_folder
from buildkit.builder.build_lock import DEFAULT_TIMEOUT_S, BuildFolderLock
from buildkit.builder.build_output import StepResult, copy_if_changed, print_summary, run_step
from buildkit.builder.build_state import (
    BUILD_NINJA,
    CMAKE_CACHE,
    CMAKE_FILES_FOLDER,
    COMPILE_COMMANDS,
    COMPILE_COMMANDS_STAMP,
    CONFIGURE_RECORD,
    INSTALL_SCRIPT,
    RULES_NINJA,
    starts_as_generated,
    state_path,
)
from buildkit.builder.configure import file_api
from buildkit.builder.configure.arguments import ConfigureArguments
from buildkit.builder.configure.cmake_cache import (
    BuildFolderCache,
    CacheTruncatedError,
    CMakeCache,
    CMakeCacheError,
    project_uses_cuda,
)
from buildkit.builder.configure.configure_state import FINGERPRINT_FORMAT, Decision, diff_inputs, needs_fresh
from buildkit.builder.configure.torch_env import installed_torch, isolation_mismatch, project_uses_torch
from buildkit.builder.install.manifest import InstallManifests
from buildkit.builder.install.step import PackageTreeInstall
from buildkit.builder.toolchain import tools as toolchain
from buildkit.builder.toolchain.compiler_checks import (
    check_named_compilers,
    compilers_from_cache,
    vanished_compiler_hint,
)
from buildkit.builder.toolchain.dist_session import DistributedBuild, announce, report
from buildkit.builder.toolchain.jobs import default_job_count, total_memory_mb
from buildkit.builder.toolchain.tools import Toolchain
from buildkit.config.modes import Distribution
from buildkit.config.options import BuildOptions
from buildkit.config.settings import ProjectSettings
from buildkit.errors import BuildFailedError, ConfigError


def resolved_build_type(options: BuildOptions, cache: BuildFolderCache) -> str:
    """The build type a build in this folder uses: an explicit request, else the cache's, else
    the project default.  The one answer for the driver, the project (the version module, the
    extension's flags) and the no-op record."""
    return options.resolve_build_type(cache.value("CMAKE_BUILD_TYPE"))


@dataclass
class DriverResult:
    decision: Decision
    timings: dict[str, float] = field(default_factory=dict)  # phase -> seconds, and "total"
    steps: int = 0  # Ninja edges run
    installed: bool = False  # whether the install step ran
    cmake_only: bool = False  # stopped after configure
    compile_commands_updated: bool = False

    @property
    def configured(self) -> bool:
        return "configure" in self.timings

    @classmethod
    def without_cmake(cls) -> DriverResult:
        """The result of a project's build when it has no CMake part (`cmake = false`): nothing ran."""
        return cls(Decision(False, ["[tool.buildkit] cmake = false"]))


class CMakeDriver:
    def __init__(self, settings: ProjectSettings, options: BuildOptions, *, install_prefix: Path,
                 install_root: Path | None = None, configured_prefix: Path | None = None,
                 extra_defines: Mapping[str, str] = {},
                 prefix_path: Sequence[str | Path] = (), module_path: Sequence[str | Path] = (),
                 build_dir: Path | None = None, lock_timeout: float = DEFAULT_TIMEOUT_S,
                 cache: BuildFolderCache | None = None, manifests: InstallManifests | None = None,
                 develop: bool = False, listed_type: str | None = None,
                 configure_notes: Sequence[str] = ()):
        self.settings = settings
        self.options = options
        # Where this run installs, and the CMAKE_INSTALL_PREFIX of the configure: a wheel
        # build installs into a staging folder with `cmake --install --prefix`, so that
        # switching between develop and wheel builds never reconfigures.
        self.install_prefix = Path(install_prefix).absolute()
        # The folder the install may write in, which holds the prefix (PackageTreeInstall's).
        self.install_root = Path(install_root or install_prefix).absolute()
        self.configured_prefix = Path(configured_prefix or install_prefix).absolute()
        self.build_dir = Path(build_dir or settings.build_dir).absolute()
        self.source_dir = settings.source_dir
        # An in-place build for the edit loop (not a wheel's) compiles one CUDA architecture.
        local_jobs = (default_job_count(available_memory_mb=total_memory_mb(), job_memory_mb=settings.job_memory_mb)
                      if options.dist is Distribution.SCCACHE else None)
        self.arguments = ConfigureArguments(options, self.source_dir, self.build_dir, self.configured_prefix,
                                            tuple(map(str, prefix_path)), tuple(map(str, module_path)),
                                            dict(extra_defines), develop, local_jobs)
        self.fingerprint_path = Path(state_path(self.build_dir, CONFIGURE_RECORD))
        self.lock_timeout = lock_timeout
        # Shared with the Project that made this driver: one reading of the cache per version.
        self.cache_file = cache or BuildFolderCache(self.build_dir)
        self.manifests = manifests or InstallManifests(self.build_dir)
        self._toolchain: Toolchain | None = None
        # The type of a build-type list's other build that this driver runs, in a folder of its own: it
        # names the type in its summary and leaves the project root's compile_commands.json to the primary.
        self.listed_type = listed_type
        self.configure_notes = tuple(configure_notes)  # said when CMake configures (the CUDA toolkit chosen)

    # ------------------------------------------------------------ state
    @property
    def cache(self) -> CMakeCache | None:
        """The parsed CMakeCache.txt, None before the first configure."""
        return self.cache_file.entries()

    def _cached(self, name: str) -> str | None:
        return self.cache_file.value(name)

    def _generator(self) -> str | None:
        return self.options.cmake_generator or self._cached("CMAKE_GENERATOR")

    def _uses_ninja(self) -> bool:
        return (self._generator() or "").startswith("Ninja")

    def build_type(self) -> str:
        return resolved_build_type(self.options, self.cache_file)

    # --------------------------------------------------------- decision
    def configure_decision(self) -> Decision:
        """Whether CMake must configure, and every reason why."""
        if self.options.cmake_fresh:
            return Decision(True, ["CMAKE_FRESH=1 asks for a configure from scratch"], fresh=True)
        try:
            cache = self.cache
        except CMakeCacheError as exc:
            what = ("truncated (its last line has no line break)" if isinstance(exc, CacheTruncatedError)
                    else f"unreadable (line {exc.lineno})")
            return Decision(True, [f"CMakeCache.txt is {what}: reconfiguring from scratch"], fresh=True)
        if cache is None:
            return Decision(True, ["no CMakeCache.txt"])
        if "CMAKE_HOME_DIRECTORY" not in cache:  # CMake writes it into every cache it makes
            return Decision(True, ["CMakeCache.txt holds none of the entries CMake writes (it is empty or "
                                   "damaged): reconfiguring from scratch"], fresh=True)
        reasons = self._missing_build_files(cache)
        tools, tool_reasons = self._current_toolchain(cache)
        reasons += tool_reasons
        old = self._read_fingerprint()
        if old is None:
            reasons.append("no record of a finished configure (the last one was interrupted, "
                           "or another tool made this build folder)")
            return Decision(True, reasons)
        changes = diff_inputs(old, self.configure_inputs(tools, self.build_type()))
        reasons += [text for _, text in changes]
        return Decision(bool(reasons), reasons, fresh=any(needs_fresh(label, cache) for label, _ in changes),
                        forget_python=any(label == "Python" for label, _ in changes))

    def _missing_build_files(self, cache: CMakeCache) -> list[str]:
        reasons = []
        generated = [INSTALL_SCRIPT]
        if self._uses_ninja():
            generated += [BUILD_NINJA, RULES_NINJA]
        for name in generated:
            if not (self.build_dir / name).is_file():
                reasons.append(f"{name} is missing")
            elif not starts_as_generated(self.build_dir / name):
                reasons.append(f"{name} does not start as CMake writes it (it is damaged)")
        make = cache.get_value("CMAKE_MAKE_PROGRAM")
        if make and os.path.isabs(make) and not os.path.exists(make):
            reasons.append(f"the build program CMake recorded, {make}, no longer exists")
        return reasons

    def _current_toolchain(self, cache: CMakeCache) -> tuple[Toolchain, list[str]]:
        """The recorded tools when they are unchanged; else newly found ones, and why."""
        raw = _read_json(toolchain.record_path(self.build_dir))
        reasons = toolchain.check_record(raw) if isinstance(raw, dict) else ["no record of the tools used"]
        if not reasons:
            self._toolchain = Toolchain.from_record(raw)
        else:
            self._toolchain = self._discover(cache)
        return self._toolchain, reasons

    def _discover(self, cache: CMakeCache | None) -> Toolchain:
        cmake = toolchain.find_cmake(self.settings.cmake_minimum_version)
        ninja = toolchain.find_ninja() if self._uses_ninja() else None
        return Toolchain(cmake, ninja, compilers_from_cache(cache))

    def _tools(self) -> Toolchain:
        if self._toolchain is None:
            self._toolchain = toolchain.load_recorded(self.build_dir) or self._discover(None)
        return self._toolchain

    # ------------------------------------------------------- fingerprint
    def configure_inputs(self, tools: Toolchain | None, build_type: str) -> dict[str, str]:
        """Everything a configure depends on, as label -> value (the labels name changes)."""
        return self.arguments.inputs(tools, build_type)

    def _read_fingerprint(self) -> dict[str, str] | None:
        data = _read_json(self.fingerprint_path)
        ok = (isinstance(data, dict) and data.get("format") == FINGERPRINT_FORMAT
              and isinstance(data.get("inputs"), dict))
        return data["inputs"] if ok else None

    # ---------------------------------------------------------- configure
    def configure_command(self, tools: Toolchain, build_type: str, forget_python: bool = False) -> list[str]:
        """The cmake argument list; never a shell string, so values arrive verbatim."""
        return self.arguments.command(tools, build_type, uses_ninja=self._uses_ninja(), forget_python=forget_python)

    def configure(self, decision: Decision | None = None) -> StepResult:
        """Run CMake; on success record the tools and the configure inputs."""
        decision = decision or self.configure_decision()
        build_type = self.build_type()  # read before a fresh start deletes the cache
        if decision.fresh:
            self._delete_cache()
        self.fingerprint_path.unlink(missing_ok=True)
        # From scratch means finding the tools again too (the probe cache makes it cheap).
        tools = self._discover(None) if decision.fresh else self._tools()
        check_named_compilers(self.options, self.build_dir)
        if project_uses_torch(self.source_dir / "CMakeLists.txt") and (
                mismatch := isolation_mismatch(installed_torch())):
            console.warn(mismatch)
        command = self.configure_command(tools, build_type, decision.forget_python)
        for note in (*self.configure_notes, self.arguments.cuda_architectures[1]):
            if note:
                console.info(note)
        file_api.write_query(self.build_dir)
        try:
            result = run_step("configure", command, build_dir=self.build_dir, verbose=self.options.verbose)
        except BuildFailedError as error:
            error.hint = error.hint or vanished_compiler_hint(self.options, self.build_dir)
            raise
        self.cache_file.forget()
        tools = replace(tools, compilers=compilers_from_cache(self.cache))
        toolchain.record(self.build_dir, tools)
        self._toolchain = tools
        _write_json(self.fingerprint_path, {"format": FINGERPRINT_FORMAT,
                                            "inputs": self.configure_inputs(tools, build_type)})
        return result

    def _refuse_missing_cmakelists(self) -> None:
        # Most likely a project without a CMake part, which CMake's own message does not suggest.
        if not (self.source_dir / "CMakeLists.txt").is_file():
            where = ("its `cmake-source-dir`, " if self.source_dir != self.settings.root else "") + str(self.source_dir)
            raise ConfigError(
                f"There is no CMakeLists.txt in {where}, so CMake cannot configure the project.",
                "If the project has no C, C++ or CUDA part to build with CMake, add `cmake = false` to "
                "[tool.buildkit] in pyproject.toml: buildkit then builds the Python side only (version module, "
                "metadata, package data, sdist, a pure wheel, editable installs) and never runs CMake. If the "
                "CMakeLists.txt is in another folder, set `cmake-source-dir` to it.")

    def _delete_cache(self) -> None:
        # Only these two, only inside the build folder: never follow a link out of it.
        (self.build_dir / CMAKE_CACHE).unlink(missing_ok=True)
        files = self.build_dir / CMAKE_FILES_FOLDER
        if files.is_symlink():
            files.unlink()
        elif files.is_dir():
            shutil.rmtree(files)
        self.cache_file.forget()

    # -------------------------------------------------------------- build
    def job_count(self, remote_slots: int | None = None) -> int:
        """MAX_JOBS, else the cores and memory allow, else a cluster's remote slots when there are more."""
        if self.options.jobs:
            return self.options.jobs
        local = default_job_count(job_memory_mb=self.settings.job_memory_mb, cuda=self._uses_cuda(),
                                  cuda_job_memory_mb=self.settings.cuda_job_memory_mb)
        return max(local, remote_slots or 0)

    def _uses_cuda(self) -> bool:
        # Before the first configure the job count is not needed; no cache, no CUDA.
        return self.cache is not None and project_uses_cuda(self.cache, self.source_dir / "CMakeLists.txt")

    def build_command(self, jobs: int) -> list[str]:
        make = self._cached("CMAKE_MAKE_PROGRAM")
        if self._generator() == "Ninja" and make:
            return [make, "-C", str(self.build_dir), "-j", str(jobs), *(["-v"] if self.options.verbose else [])]
        return [str(self._tools().cmake.path), "--build", str(self.build_dir), "--config", self.build_type(),
                "-j", str(jobs), *(["--verbose"] if self.options.verbose else [])]

    def build(self) -> StepResult:
        launcher = self.arguments.distributed_launcher()  # None: every compile on this machine
        dist = DistributedBuild(launcher, self.build_dir) if launcher else None
        plan = dist.start(self._cached("CMAKE_C_COMPILER") or self._cached("CMAKE_CXX_COMPILER")) if dist else None
        jobs = self.job_count(plan.slots if plan else None)
        if plan:
            announce(plan, jobs, self.arguments.local_pool_depth(), self.options)
        result = None
        try:
            result = run_step("build", self.build_command(jobs), build_dir=self.build_dir,
                              verbose=self.options.verbose, jobs=jobs)
            return result
        finally:
            if dist:
                report(dist, self.build_dir, result.edges if result else None)

    # ------------------------------------------------------------ install
    def install(self, build: StepResult | None = None) -> StepResult | None:
        """Install into the package tree; None when skipped because everything is installed."""
        return self.installer().install(build)

    def installer(self) -> PackageTreeInstall:
        """The install of this folder into this run's prefix."""
        return PackageTreeInstall(self.build_dir, self.install_prefix, self._tools().cmake.path, self.build_type(),
                                  install_root=self.install_root, verbose=self.options.verbose,
                                  manifests=self.manifests)

    def sync_compile_commands(self) -> bool:
        """Copy compile_commands.json to the project root when its content changed (not for
        a wheel build, which leaves the source tree as it was)."""
        if self.install_prefix != self.configured_prefix or self.listed_type:
            return False
        return copy_if_changed(self.build_dir / COMPILE_COMMANDS, self.settings.root / COMPILE_COMMANDS,
                               Path(state_path(self.build_dir, COMPILE_COMMANDS_STAMP)))

    # ---------------------------------------------------------------- lock
    def lock(self) -> BuildFolderLock:
        """Hold ``.buildkit/lock``: two builds in one folder would overwrite each other's files."""
        return lock_own_build_folder(self.build_dir, self.settings.root, self.settings.project_folders,
                                     self.lock_timeout)

    # ----------------------------------------------------------------- run
    def run(self, *, lock_held: bool = False) -> DriverResult:
        """Decide, configure if needed, build, install, update compile_commands.json.

        ``lock_held``: the caller holds the folder's lock for its whole command
        (:meth:`buildkit.project.Project.locked`); otherwise the run takes it itself.
        """
        started = time.perf_counter()
        if lock_held:
            result = self._run_locked()
        else:
            with self.lock():
                result = self._run_locked()
        if not result.cmake_only:
            print_summary(list(result.timings.items()), result.steps, self.listed_type)
        result.timings["total"] = time.perf_counter() - started
        return result

    def _run_locked(self) -> DriverResult:
        self._refuse_missing_cmakelists()
        decision = self.configure_decision()
        result = DriverResult(decision)
        if decision.needed:
            console.info(f"configuring {self.build_dir}: " + "; ".join(decision.reasons))
            result.timings["configure"] = self.configure(decision).seconds
        if self.options.cmake_only:
            result.cmake_only = True
            result.compile_commands_updated = self.sync_compile_commands()
            self._explain_cmake_only()
            return result
        build = self.build()
        result.timings["build"], result.steps = build.seconds, build.steps
        installed = self.install(build)
        if installed is not None:
            result.timings["install"], result.installed = installed.seconds, True
        result.compile_commands_updated = self.sync_compile_commands()
        return result

    def _explain_cmake_only(self) -> None:
        command = shlex.join([str(self._tools().cmake.path), "--build", str(self.build_dir), "--target", "install"])
        console.info(f"stopped after configure (CMAKE_ONLY=1). To build and install, run `{command}`, "
                     "or run this command again without CMAKE_ONLY.")
