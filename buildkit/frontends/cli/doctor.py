"""``buildkit doctor [PATH]``: is this machine ready to build the project?

Prints one table: each tool a build needs, the version and path found, and for each
problem what to do about it.  Exits 1 when anything would make the build fail (or
get killed), so it can gate a CI job before the expensive part starts.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path

from buildkit._util import console
from buildkit.builder.build_state import TORCH_PROJECT
from buildkit.builder.configure.torch_env import InstalledTorch, installed_torch, project_uses_torch
from buildkit.builder.toolchain.dist_session import doctor_findings
from buildkit.builder.toolchain.jobs import available_memory_mb, default_job_count, memory_warning
from buildkit.builder.toolchain.tools import (
    Compilers,
    cache_path_for,
    find_cmake,
    find_compilers,
    find_ninja,
    probe_tool,
)
from buildkit.config.drop_in import tool_settings, uses_drop_in
from buildkit.config.modes import Distribution
from buildkit.config.options import BuildOptions, load_options, option_keys
from buildkit.config.parsing import parse_bool
from buildkit.config.settings import ProjectSettings, setting_default
from buildkit.errors import ConfigError, ToolchainError, exit_on_error
from buildkit.frontends.cli.audit import WHEEL_TOOLS_FIX, find_wheel_tool
from buildkit.frontends.cli.doctor_cuda import (
    check_architectures,
    check_cuda_toolkit,
    check_nvcc,
    check_nvcc_on_path,
    check_nvidia_libraries,
    project_uses_cuda_code,
)
from buildkit.frontends.cli.doctor_rows import Check, problem_row, tool_found

# auditwheel (and the patchelf it runs) repairs and audits Linux wheels only.
WHEEL_TOOLS = ("auditwheel", "patchelf", "twine") if sys.platform.startswith("linux") else ("twine",)
LAUNCHERS = ("ccache", "sccache")
COLUMNS = ("check", "version", "path", "status", "what to do")
WITHOUT_CMAKE = ("none: [tool.buildkit] cmake = false, so no cmake, ninja, compiler or Python headers are needed "
                 "to build the project")


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
    uses_cuda = cuda_wanted if cuda_wanted is not None else project_uses_cuda_code(settings)
    compiler_env = dict(compiler_env or {})
    if uses_cuda and settings is not None:
        toolkit, choice = check_cuda_toolkit(settings, options)
        checks += [toolkit, *check_nvcc_on_path(choice, settings), *check_nvidia_libraries(settings, options, choice)]
        if choice is not None and choice.toolkit is not None and choice.from_wheels:
            compiler_env["CUDACXX"] = str(choice.toolkit.nvcc)  # the nvcc the build will be given
    compilers, compiler_checks = _check_compilers(defines, compiler_env, cuda_wanted, cache_path)
    checks += compiler_checks
    if cuda_wanted or compilers.nvcc:
        checks += check_nvcc(compilers.nvcc, cuda_wanted)
    if uses_cuda:
        checks.append(check_architectures(options, compilers.nvcc, gpu_present))
    if settings is not None and (settings.generated_source  # a buildkit.torch project
                                 or project_uses_torch(settings.source_dir / "CMakeLists.txt")):
        checks.append(_check_torch(installed_torch()))
    checks.append(_check_launcher(options, cache_path))
    if options.dist is Distribution.SCCACHE:  # the cluster, its toolchains, the last build's failure
        build_dir = settings.build_dir if settings else Path("build")
        checks += [Check(**vars(f)) for f in doctor_findings(options.compiler_launcher, build_dir)]
    checks.append(_check_memory(settings, options, cuda=uses_cuda))
    return checks + [_check_wheel_tool(name) for name in WHEEL_TOOLS]


def _check_wheel_tool(name: str) -> Check:
    # A note, not a problem: a build needs none of them, only `buildkit wheels` does.
    tool = find_wheel_tool(name)
    if tool.path is None:
        return Check(name, status="note", detail="missing: `buildkit wheels` needs it", fix=WHEEL_TOOLS_FIX)
    return Check(name, tool.version, str(tool.path))


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
        return tool_found("cmake", find_cmake(minimum, cache_path=cache_path))
    except ToolchainError as exc:
        return problem_row("cmake", exc)


def _check_ninja(options: BuildOptions, cache_path: Path | str | None) -> Check:
    if options.cmake_generator != "Ninja":
        return Check("ninja", status="note",
                     detail=f"not used: the generator is {options.cmake_generator or 'the CMake default'}")
    try:
        return tool_found("ninja", find_ninja(cache_path=cache_path))
    except ToolchainError as exc:
        return problem_row("ninja", exc)


def _check_compilers(defines: Mapping[str, str], env: Mapping[str, str], cuda_wanted: bool | None,
                     cache_path: Path | str | None) -> tuple[Compilers, list[Check]]:
    # CMAKE_<LANG>_COMPILER wins over CC/CXX/CUDACXX in CMake too.
    requested = {lang: defines.get(f"CMAKE_{lang}_COMPILER") or env.get(var)
                 for lang, var in (("C", "CC"), ("CXX", "CXX"), ("CUDA", "CUDACXX"))}
    try:
        compilers = find_compilers(cuda_wanted is not False, cc=requested["C"], cxx=requested["CXX"],
                                   cudacxx=requested["CUDA"], cache_path=cache_path)
    except ToolchainError as exc:
        return Compilers(), [problem_row("compilers", exc)]
    checks = []
    for name, tool, variable in (("C compiler", compilers.c, "CC"), ("C++ compiler", compilers.cxx, "CXX")):
        checks.append(tool_found(name, tool) if tool else Check(
            name, status="problem", detail="none found on PATH",
            fix=f"Install gcc or clang (Debian/Ubuntu: `apt install build-essential`), or set {variable}."))
    return compilers, checks


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
        console.warn(f"{len(problems)} problem_row(s) found; the last column says what to do about each.")
        return 1
    console.info("everything a build needs was found.")
    return 0
