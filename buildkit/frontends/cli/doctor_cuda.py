"""``buildkit doctor``'s CUDA rows: the toolkit a build would compile with and the ``nvcc``
first on PATH, NVIDIA's library wheels among the library dependencies, nvcc's version and
the architectures it is asked for."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from buildkit.builder.configure.build_env import site_dirs
from buildkit.builder.configure.cmake_cache import BuildFolderCache, project_uses_cuda
from buildkit.builder.toolchain.cuda_arch import (
    architecture_numbers,
    minimum_arch_for_cuda,
    normalize_cuda_architectures,
)
from buildkit.builder.toolchain.cuda_toolkit import ToolkitChoice, choose_toolkit, cuda_request, toolkit_version
from buildkit.builder.toolchain.tools import Tool, real_program, version_at_least
from buildkit.config.options import BuildOptions
from buildkit.config.settings import ProjectSettings
from buildkit.errors import BuildkitError, ConfigError, ToolchainError
from buildkit.frontends.cli.doctor_rows import Check, problem_row, tool_found
from buildkit.package.dependencies import find_dependency
from buildkit.package.nvidia_libraries import check_cuda_major, cuda_major
from buildkit.project.library_conditions import Decision

MINIMUM_NVCC = "11.8"


def check_cuda_toolkit(settings: ProjectSettings, options: BuildOptions) -> tuple[Check, ToolkitChoice | None]:
    """The CUDA toolkit a build would compile with (``cuda-toolkit``), as the build chooses it."""
    name, setting = "CUDA toolkit", f"cuda-toolkit = {options.cuda_toolkit.value}"
    request = cuda_request(None, settings.source_dir / "CMakeLists.txt", options.defines(),
                           drop_in=bool(settings.generated_source))
    try:
        choice = choose_toolkit(options.cuda_toolkit, options, site_dirs(settings.root), request)
    except ToolchainError as error:
        return problem_row(name, error), None
    found = choice.toolkit
    if found is None:
        return Check(name, status="note", detail=f"{setting}: none found; CMake looks for nvcc its own way"), choice
    source = "NVIDIA's wheels" if choice.from_wheels else f"the system's (found by {found.found_by})"
    return Check(name, found.version or "?", str(found.root), detail=f"{setting}: {source}"), choice


def check_nvcc_on_path(choice: ToolkitChoice | None, settings: ProjectSettings) -> list[Check]:
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


def check_nvidia_libraries(settings: ProjectSettings, options: BuildOptions,
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
            checks.append(problem_row(name, error, found.version, where))
            continue
        checks.append(Check(name, found.version, where, detail=f"CUDA {major} ({', '.join(found.libraries)}); the "
                                                                f"wheel requires {found.requirement()}"))
    return checks


def project_uses_cuda_code(settings: ProjectSettings | None) -> bool:
    if settings is None:
        return False
    try:
        cache = BuildFolderCache(settings.build_dir).entries()
    except BuildkitError:  # a damaged cache: the build will say so; judge by CMakeLists.txt
        cache = None
    return project_uses_cuda(cache, settings.source_dir / "CMakeLists.txt")


def check_nvcc(nvcc: Tool | None, cuda_wanted: bool | None) -> list[Check]:
    if nvcc is None:
        return [Check("nvcc", status="problem", detail="USE_CUDA is on, but nvcc was not found",
                      fix=f"Install the CUDA toolkit {MINIMUM_NVCC} or newer and put its bin folder on PATH, "
                          "set CUDACXX to its nvcc, or set USE_CUDA=0.")]
    if not version_at_least(nvcc.version, MINIMUM_NVCC):
        return [Check("nvcc", nvcc.version, str(nvcc.path), "problem",
                      f"nvcc {nvcc.version} is older than {MINIMUM_NVCC}",
                      f"Install CUDA {MINIMUM_NVCC} or newer and put its nvcc first on PATH (or set CUDACXX"
                      + (" to it)." if cuda_wanted else " to it), or set USE_CUDA=0 to build without CUDA."))]
    return [tool_found("nvcc", nvcc)]


def check_architectures(options: BuildOptions, nvcc: Tool | None, gpu_present: bool | None) -> Check:
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
        return problem_row(name, exc, requested or "", variable)
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
