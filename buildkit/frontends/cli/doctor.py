"""``buildkit doctor [PATH]``: is this machine ready to build the project?

Prints one table: each tool a build needs, the version and path found, and for each
problem what to do about it.  Exits 1 when anything would make the build fail (or
get killed), so it can gate a CI job before the expensive part starts.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from buildkit._util import console
from buildkit.builder.build_state import TORCH_PROJECT
from buildkit.builder.configure.build_env import site_dirs
from buildkit.builder.configure.cmake_cache import BuildFolderCache, project_uses_cuda
from buildkit.builder.configure.torch_env import InstalledTorch, installed_torch, project_uses_torch
from buildkit.builder.toolchain.cuda_arch import (
    architecture_numbers,
    minimum_arch_for_cuda,
    normalize_cuda_architectures,
)
from buildkit.builder.toolchain.cuda_toolkit import ToolkitChoice, choose_toolkit, cuda_request, toolkit_version
from buildkit.builder.toolchain.dist_session import doctor_findings
from buildkit.builder.toolchain.jobs import available_memory_mb, default_job_count, memory_warning
from buildkit.builder.toolchain.tools import (
    Compilers,
    Tool,
    cache_path_for,
    find_cmake,
    find_compilers,
    find_ninja,
    probe_tool,
    real_program,
    version_at_least,
)
from buildkit.config.drop_in import tool_settings, uses_drop_in
from buildkit.config.modes import Distribution
from buildkit.config.options import BuildOptions, load_options, option_keys
from buildkit.config.parsing import parse_bool
from buildkit.config.settings import ProjectSettings, setting_default
from buildkit.errors import BuildkitError, ConfigError, ToolchainError, exit_on_error
from buildkit.frontends.cli.audit import WHEEL_TOOLS_FIX, find_wheel_tool
from buildkit.package.dependencies import find_dependency
from buildkit.package.nvidia_libraries import check_cuda_major, cuda_major
from buildkit.project.library_conditions import Decision

MINIMUM_NVCC = "11.8"
# auditwheel (and the patchelf it runs) repairs and audits Linux wheels only.
WHEEL_TOOLS = ("auditwheel", "patchelf", "twine") if sys.platform.startswith("linux") else ("twine",)
LAUNCHERS = ("ccache", "sccache")
COLUMNS = ("check", "version", "path", "status", "what to do")
WITHOUT_CMAKE = ("none: [tool.buildkit] cmake = false, so no cmake, ninja, compiler or Python headers are needed "
                 "to build the project")


@dataclass(frozen=True)
class Check:
    name: str
    version: str = ""
    path: str = ""
    status: str = "ok"  # "ok", "note" (worth knowing, not a failure) or "problem"
    detail: str = ""  # what is wrong, for notes and problems
    fix: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "problem"

    def row(self) -> tuple[str, ...]:
        status = self.status if not self.detail else f"{self.status}: {self.detail}"
        return self.name, self.version or "-", self.path or "-", status, self.fix


def _found(name: str, tool: Tool) -> Check:
    return Check(name, tool.version, str(tool.path))


def _problem(name: str, error: BuildkitError, version: str = "", path: str = "") -> Check:
    return Check(name, version, path, "problem", error.message, error.hint or "")


def run_doctor(settings: ProjectSettings | None, options: BuildOptions, *,
               compiler_env: Mapping[str, str] | None = None, cache_path: Path | str | None = None,
               gpu_present: bool | None = None) -> list[Check]:
    """Every check, in table order.  ``compiler_env`` holds CC/CXX/CUDACXX if set."""
    if settings is not None and not settings.cmake:  # the Python side only: no tool of a CMake build is needed
        return [_check_python(headers=False), Check("CMake build", status="note", detail=WITHOUT_CMAKE),
                *(_check_wheel_tool(name) for name in WHEEL_TOOLS)]
    defines = options.defines()
    cuda_wanted = _bool_or_none(defines.get("USE_CUDA"))
    checks = [_check_python(), _check_cmakelists(settings), _check_cmake(settings, cache_path),
              _check_ninja(options, cache_path)]
    # What the project compiles, not what is installed: the toolkit, the architectures and the per-job budget.
    uses_cuda = cuda_wanted if cuda_wanted is not None else _project_uses_cuda(settings)
    compiler_env = dict(compiler_env or {})
    if uses_cuda and settings is not None:
        toolkit, choice = _check_cuda_toolkit(settings, options)
        checks += [toolkit, *_check_nvcc_on_path(choice, settings), *_check_nvidia_libraries(settings, options, choice)]
        if choice is not None and choice.toolkit is not None and choice.from_wheels:
            compiler_env["CUDACXX"] = str(choice.toolkit.nvcc)  # the nvcc the build will be given
    compilers, compiler_checks = _check_compilers(defines, compiler_env, cuda_wanted, cache_path)
    checks += compiler_checks
    if cuda_wanted or compilers.nvcc:
        checks += _check_nvcc(compilers.nvcc, cuda_wanted)
    if uses_cuda:
        checks.append(_check_architectures(options, compilers.nvcc, gpu_present))
    if settings is not None and (settings.generated_source  # a buildkit.torch project
                                 or project_uses_torch(settings.source_dir / "CMakeLists.txt")):
        checks.append(_check_torch(installed_torch()))
    checks.append(_check_launcher(options, cache_path))
    if options.dist is Distribution.SCCACHE:  # the cluster, its toolchains, the last build's failure
        build_dir = settings.build_dir if settings else Path("build")
        checks += [Check(**vars(f)) for f in doctor_findings(options.compiler_launcher, build_dir)]
    checks.append(_check_memory(settings, options, cuda=uses_cuda))
    return checks + [_check_wheel_tool(name) for name in WHEEL_TOOLS]


def _check_cuda_toolkit(settings: ProjectSettings, options: BuildOptions) -> tuple[Check, ToolkitChoice | None]:
    """The CUDA toolkit a build would compile with (``cuda-toolkit``), as the build chooses it."""
    name, setting = "CUDA toolkit", f"cuda-toolkit = {options.cuda_toolkit.value}"
    request = cuda_request(None, settings.source_dir / "CMakeLists.txt", options.defines(),
                           drop_in=bool(settings.generated_source))
    try:
        choice = choose_toolkit(options.cuda_toolkit, options, site_dirs(settings.root), request)
    except ToolchainError as error:
        return _problem(name, error), None
    found = choice.toolkit
    if found is None:
        return Check(name, status="note", detail=f"{setting}: none found; CMake looks for nvcc its own way"), choice
    source = "NVIDIA's wheels" if choice.from_wheels else f"the system's (found by {found.found_by})"
    return Check(name, found.version or "?", str(found.root), detail=f"{setting}: {source}"), choice


def _check_nvcc_on_path(choice: ToolkitChoice | None, settings: ProjectSettings) -> list[Check]:
    """A note when the ``nvcc`` first on PATH is not of the toolkit CMake compiles with (the
    build folder's configured compiler, else the one the build would choose): CMake is given
    that one, but whatever runs ``nvcc`` by name (cpp_extension without CUDA_HOME, a script, an
    older FindCUDA) gets the other, with its own headers and libraries."""
    on_path = shutil.which("nvcc")
    try:
        cache = BuildFolderCache(settings.build_dir).entries()
    except BuildkitError:  # a damaged cache: the build will say so
        cache = None
    configured = cache.get_value("CMAKE_CUDA_COMPILER") if cache is not None else None
    chosen = Path(configured) if configured else choice.toolkit.nvcc if choice and choice.toolkit else None
    if on_path is None or chosen is None:
        return []
    path_root, chosen_root = (real_program(Path(nvcc)).resolve().parent.parent for nvcc in (on_path, chosen))
    if path_root == chosen_root:
        return []
    by = "the build folder's CMake cache" if configured else "this build's choice"
    path_version, chosen_version = (toolkit_version(root) or "?" for root in (path_root, chosen_root))
    return [Check("nvcc on PATH", path_version, on_path, "note",
                  f"it is CUDA {path_version} at {path_root}, but CMake compiles with CUDA {chosen_version} at "
                  f"{chosen_root} ({by}); what runs `nvcc` by name (cpp_extension without CUDA_HOME, scripts, "
                  f"the older FindCUDA) gets the other toolkit, with its own headers and libraries",
                  f"Put {chosen_root}/bin first on PATH, or set CUDACXX (and CUDA_HOME) to the toolkit you mean "
                  "and cuda-toolkit to match.")]


def _check_nvidia_libraries(settings: ProjectSettings, options: BuildOptions,
                            choice: ToolkitChoice | None) -> list[Check]:
    """The NVIDIA library wheels among the library dependencies, as the build would find them:
    their CUDA major (their ``nvidia/cu<N>`` folder) against the toolkit's, and the pin."""
    checks = []
    toolkit_major = choice.toolkit.major if choice is not None and choice.toolkit is not None else None
    decision = Decision.before_configure(settings, options, BuildFolderCache(settings.build_dir).readable_entries())
    for declared in settings.library_dependencies:
        name = f"library {declared.distribution}"
        if not decision.holds[declared.distribution]:
            checks.append(Check(name, status="note", detail=f"not linked by this build: `when = \"{declared.when}\"` "
                                f"does not hold ({decision.before.describe_condition(declared.when or '')})"))
            continue
        try:
            found = find_dependency(declared, project=settings.project_name)
        except BuildkitError:  # an isolated build may get it from [build-system] requires
            checks.append(Check(name, status="note", detail=f"not installed in {sys.prefix}: a build without "
                                                            "isolation would stop here",
                                fix=f"pip install {declared.distribution}" + (
                                    "" if declared.when else ", or list it in [build-system] requires")))
            continue
        major = cuda_major(found.lib_dirs)
        if major is None:
            continue  # not one of NVIDIA's CUDA 13+ library wheels: nothing CUDA-specific to check
        where = str(Path(found.site_dir, *found.lib_dirs[:1]))
        try:
            check_cuda_major(found.distribution, found.version, major, toolkit_major)
        except BuildkitError as error:
            checks.append(_problem(name, error, found.version, where))
            continue
        checks.append(Check(name, found.version, where, detail=f"CUDA {major} ({', '.join(found.libraries)}); the "
                                                                f"wheel requires {found.requirement()}"))
    return checks


def _check_wheel_tool(name: str) -> Check:
    # A note, not a problem: a build needs none of them, only `buildkit wheels` does.
    tool = find_wheel_tool(name)
    if tool.path is None:
        return Check(name, status="note", detail="missing: `buildkit wheels` needs it", fix=WHEEL_TOOLS_FIX)
    return Check(name, tool.version, str(tool.path))


def _project_uses_cuda(settings: ProjectSettings | None) -> bool:
    if settings is None:
        return False
    try:
        cache = BuildFolderCache(settings.build_dir).entries()
    except BuildkitError:  # a damaged cache: the build will say so; judge by CMakeLists.txt
        cache = None
    return project_uses_cuda(cache, settings.source_dir / "CMakeLists.txt")


def _bool_or_none(value: str | None) -> bool | None:
    try:
        return None if value is None else parse_bool(value, "USE_CUDA")
    except ConfigError:
        return None


def _check_python(*, headers: bool = True) -> Check:
    """The interpreter, and with ``headers`` the development headers every extension module needs."""
    if not headers:
        return Check("Python", platform.python_version(), sys.executable)
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    check = Check("Python + headers", platform.python_version(), sys.executable)
    if header.is_file():
        return check
    short = f"{sys.version_info.major}.{sys.version_info.minor}"
    return Check(check.name, check.version, f"{sys.executable} (no {header})", "problem",
                 "the Python development headers are missing, so no extension module can be compiled",
                 f"Install them: `apt install python{short}-dev` (Debian/Ubuntu), `dnf install python3-devel` "
                 "(Fedora/RHEL), or use a Python that ships them (python.org, conda, pyenv, uv).")


def _check_cmakelists(settings: ProjectSettings | None) -> Check:
    name = "CMakeLists.txt"
    if settings is None:
        return Check(name, status="note", detail="no pyproject.toml: no project to look at")
    found = settings.source_dir / "CMakeLists.txt"
    if found.is_file():
        return Check(name, path=str(found))
    return Check(name, path=str(settings.source_dir), status="problem", detail="missing: CMake cannot configure",
                 fix="For a project without a C, C++ or CUDA part, add `cmake = false` to [tool.buildkit]; "
                     "else set `cmake-source-dir` to the folder that holds it.")


def _check_cmake(settings: ProjectSettings | None, cache_path: Path | str | None) -> Check:
    minimum = settings.cmake_minimum_version if settings else setting_default("cmake_minimum_version")
    try:
        return _found("cmake", find_cmake(minimum, cache_path=cache_path))
    except ToolchainError as exc:
        return _problem("cmake", exc)


def _check_ninja(options: BuildOptions, cache_path: Path | str | None) -> Check:
    if options.cmake_generator != "Ninja":
        return Check("ninja", status="note",
                     detail=f"not used: the generator is {options.cmake_generator or 'the CMake default'}")
    try:
        return _found("ninja", find_ninja(cache_path=cache_path))
    except ToolchainError as exc:
        return _problem("ninja", exc)


def _check_compilers(defines: Mapping[str, str], env: Mapping[str, str], cuda_wanted: bool | None,
                     cache_path: Path | str | None) -> tuple[Compilers, list[Check]]:
    # CMAKE_<LANG>_COMPILER wins over CC/CXX/CUDACXX in CMake too.
    requested = {lang: defines.get(f"CMAKE_{lang}_COMPILER") or env.get(var)
                 for lang, var in (("C", "CC"), ("CXX", "CXX"), ("CUDA", "CUDACXX"))}
    try:
        compilers = find_compilers(cuda_wanted is not False, cc=requested["C"], cxx=requested["CXX"],
                                   cudacxx=requested["CUDA"], cache_path=cache_path)
    except ToolchainError as exc:
        return Compilers(), [_problem("compilers", exc)]
    checks = []
    for name, tool, variable in (("C compiler", compilers.c, "CC"), ("C++ compiler", compilers.cxx, "CXX")):
        checks.append(_found(name, tool) if tool else Check(
            name, status="problem", detail="none found on PATH",
            fix=f"Install gcc or clang (Debian/Ubuntu: `apt install build-essential`), or set {variable}."))
    return compilers, checks


def _check_nvcc(nvcc: Tool | None, cuda_wanted: bool | None) -> list[Check]:
    if nvcc is None:
        return [Check("nvcc", status="problem", detail="USE_CUDA is on, but nvcc was not found",
                      fix=f"Install the CUDA toolkit {MINIMUM_NVCC} or newer and put its bin folder on PATH, "
                          "set CUDACXX to its nvcc, or set USE_CUDA=0.")]
    if not version_at_least(nvcc.version, MINIMUM_NVCC):
        return [Check("nvcc", nvcc.version, str(nvcc.path), "problem",
                      f"nvcc {nvcc.version} is older than {MINIMUM_NVCC}",
                      f"Install CUDA {MINIMUM_NVCC} or newer and put its nvcc first on PATH (or set CUDACXX"
                      + (" to it)." if cuda_wanted else " to it), or set USE_CUDA=0 to build without CUDA."))]
    return [_found("nvcc", nvcc)]


def _check_architectures(options: BuildOptions, nvcc: Tool | None, gpu_present: bool | None) -> Check:
    request = options.cuda_architecture_request()
    variable = request.variable if request else options.variable_names.get("cuda_arch_list") or "CUDA_ARCH_LIST"
    requested = request.value if request else None
    name = "CUDA architectures"
    if request is None:  # buildkit passes none to CMake (builder/driver.py): the project's own choice stands
        return Check(name, "-", variable, "note", "unset: the project's CMakeLists.txt (or CMake's default) chooses",
                     f"Set {variable} (e.g. 8.0;9.0) to choose them.")
    try:
        value = normalize_cuda_architectures(requested, variable=variable, gpu_present=gpu_present,
                                             minimum=minimum_arch_for_cuda(nvcc.version if nvcc else None),
                                             pytorch_exact=bool(request and request.pytorch_exact))
    except ConfigError as exc:
        return _problem(name, exc, requested or "", variable)
    supported = _nvcc_architectures(nvcc) if nvcc else set()
    missing = [f"sm_{a}" for a in architecture_numbers(value) if supported and a.rstrip("af") not in supported]
    if missing:
        return Check(name, value, variable, "problem",
                     f"nvcc {nvcc.version if nvcc else ''} cannot compile for {', '.join(missing)}",
                     f"Remove them from {variable} (`nvcc --list-gpu-arch` lists what this nvcc supports), "
                     "or install a CUDA toolkit that supports them.")
    return Check(name, value, variable)


def _nvcc_architectures(nvcc: Tool) -> set[str]:
    """The compute_XX numbers ``nvcc --list-gpu-arch`` prints; empty when it can't tell."""
    try:
        proc = subprocess.run([str(nvcc.path), "--list-gpu-arch"], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return set()
    words = proc.stdout.split() if proc.returncode == 0 else []
    return {word.removeprefix("compute_") for word in words if word.startswith("compute_")}


def _check_torch(torch: InstalledTorch | None) -> Check:
    name = "torch"
    build_here = ("Install the torch the extension will run with into this environment "
                  "(`pip install torch==<version>`) and build with --no-build-isolation or `buildkit develop` "
                  "(docs/migration/from-cpp-extension.md).")
    if torch is None:
        return Check(name, status="problem", fix=build_here,
                     detail=f"CMakeLists.txt finds torch, but {sys.executable} has none")
    if torch.cmake_dir is None:
        return Check(name, torch.version, str(torch.folder), "problem",
                     f"this torch has no {torch.folder / 'share' / 'cmake' / 'Torch' / 'TorchConfig.cmake'}",
                     "Reinstall it from its wheel (`pip install --force-reinstall torch==<version>`): "
                     "torch's wheels ship their CMake package.")
    return Check(name, f"{torch.version} ({torch.build})", str(torch.cmake_dir))


def _check_launcher(options: BuildOptions, cache_path: Path | str | None) -> Check:
    name = "compiler launcher"
    wanted = options.compiler_launcher
    found = shutil.which(wanted) if wanted else next(filter(None, map(shutil.which, LAUNCHERS)), None)
    if found:
        tool = probe_tool("launcher", found, cache_path=cache_path)
        return Check(name, tool.version if tool else "?", found)
    if wanted:
        variable = options.variable_names.get("compiler_launcher") or "BUILDKIT_COMPILER_LAUNCHER"
        return Check(name, path=wanted, status="problem", detail=f"{wanted} is not on PATH",
                     fix=f"Install {wanted}, or unset {variable}.")
    return Check(name, status="note", detail="none found (optional)",
                 fix="Install ccache or sccache to make rebuilds after a clean much faster.")


def _check_memory(settings: ProjectSettings | None, options: BuildOptions, *, cuda: bool) -> Check:
    job_mb = settings.job_memory_mb if settings else setting_default("job_memory_mb")
    cuda_job_mb = settings.cuda_job_memory_mb if settings else setting_default("cuda_job_memory_mb")
    per_job = max(job_mb, cuda_job_mb) if cuda else job_mb
    available = available_memory_mb()
    jobs = options.jobs or default_job_count(available_memory_mb=available, job_memory_mb=job_mb, cuda=cuda,
                                             cuda_job_memory_mb=cuda_job_mb)
    where = f"{available if available is not None else '?'} MB free, {per_job} MB per job"
    warning = memory_warning(jobs, per_job, available)
    if warning:
        return Check("jobs / memory", f"{jobs} jobs", where, "problem", "too little memory for the job count", warning)
    return Check("jobs / memory", f"{jobs} jobs", where)


def print_checks(checks: Sequence[Check]) -> None:
    console.print_table("buildkit doctor", COLUMNS, [check.row() for check in checks])


def _compiler_environment(options: BuildOptions) -> dict[str, str]:
    return {name: value for name, value in (("CC", options.cc), ("CXX", options.cxx), ("CUDACXX", options.cudacxx))
            if value}


def main(argv: Sequence[str] | argparse.Namespace | None = None) -> int:
    """``buildkit doctor [PATH]``; returns the exit code (1 when a problem was found)."""
    parser = argparse.ArgumentParser(prog="buildkit doctor",
                                     description="Check the tools and resources a build of the project needs.")
    parser.add_argument("path", nargs="?", default=".", help="the project folder (default: the current one)")
    # The CLI may hand over its own parsed namespace instead of the argument list.
    args = argv if isinstance(argv, argparse.Namespace) else parser.parse_args(argv)
    return _doctor(Path(args.path or "."))


@exit_on_error
def _doctor(root: Path) -> int:
    settings = tool_settings(root, option_keys(), TORCH_PROJECT) if (root / "pyproject.toml").is_file() \
        or uses_drop_in(root) else None
    options = load_options(settings)
    # Reuse the build dir's probe cache when there is one; never create the build dir.
    cache = cache_path_for(settings.build_dir) if settings and settings.build_dir.is_dir() else None
    checks = run_doctor(settings, options, compiler_env=_compiler_environment(options), cache_path=cache)
    print_checks(checks)
    problems = [check for check in checks if not check.ok]
    if problems:
        console.warn(f"{len(problems)} problem(s) found; the last column says what to do about each.")
        return 1
    console.info("everything a build needs was found.")
    return 0
