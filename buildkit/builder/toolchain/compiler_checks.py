"""Compiler questions the driver asks around a configure: which compilers the options
name, whether they exist, what to say when one a build folder was configured with is
gone, and which ones CMake actually chose."""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from buildkit.builder.configure.cmake_cache import CMakeCache, is_cmake_notfound
from buildkit.builder.configure.configure_state import CACHE_COMPILERS, TOOL_LABELS
from buildkit.builder.toolchain import tools as toolchain
from buildkit.builder.toolchain.tools import Compilers
from buildkit.config.options import BuildOptions
from buildkit.errors import ToolchainError


def named_compilers(options: BuildOptions) -> dict[str, str]:
    """CC/CXX/CUDACXX as the options give them (only those set)."""
    o = options
    return {name: value for name, value in (("CC", o.cc), ("CXX", o.cxx), ("CUDACXX", o.cudacxx)) if value}


def check_named_compilers(options: BuildOptions, build_dir: Path) -> None:
    """A compiler named by CC/CXX/CUDACXX that doesn't exist: say so before CMake fails obscurely."""
    for variable, value in named_compilers(options).items():
        program = shlex.split(value)[-1] if value.strip() else value  # "ccache g++" runs g++
        if (os.sep in program and os.path.exists(program)) or shutil.which(program):
            continue
        raise ToolchainError(
            f"{variable}={value!r} names a compiler that does not exist.",
            vanished_compiler_hint(options, build_dir)
            or f"Install it, point {variable} at an installed compiler, or unset {variable} to let CMake "
               "find one (`buildkit doctor` lists the compilers it finds).")


def vanished_compiler_hint(options: BuildOptions, build_dir: Path) -> str | None:
    """What to do when a compiler this folder was configured with is gone (CMake's own
    error only says it can't find it)."""
    recorded = toolchain.load_recorded(build_dir)
    defines = dict(options.cmake_defines)
    for kind, variable in (("c", "CC"), ("cxx", "CXX"), ("nvcc", "CUDACXX")):
        tool = getattr(recorded.compilers, kind) if recorded else None
        if tool is None or os.path.lexists(tool.path):
            continue
        define = CACHE_COMPILERS[kind]
        naming = [f"{name}={value}" for name, value in ((variable, os.environ.get(variable)),
                                                        (define, defines.get(define)))
                  if value and str(tool.path) in value]
        if naming:
            return (f"The {TOOL_LABELS[kind]} {tool.path} this build folder was configured with no longer exists, "
                    f"and {' and '.join(naming)} still names it: install it again, or set {variable} to an "
                    "installed compiler (or unset it) and run again.")
        return (f"The {TOOL_LABELS[kind]} {tool.path} this build folder was configured with no longer exists: "
                "install it again, or run again with CMAKE_FRESH=1 to configure with the compilers found now.")
    return None


def compilers_from_cache(cache: CMakeCache | None) -> Compilers:
    """The compilers CMake actually chose (CC, CXX, toolchain files...), with versions."""
    found: dict[str, toolchain.Tool | None] = {}
    for kind, variable in CACHE_COMPILERS.items():
        path = cache.get_value(variable) if cache is not None else None
        if path and os.path.isabs(path) and not is_cmake_notfound(path):
            found[kind] = toolchain.probe_tool(kind, path)
        else:
            found[kind] = None
    return Compilers(**found)
