"""What one configure of a build folder is given: the cmake command line, and the same
facts as labelled inputs, which the configure record keeps so that the next build can
say which of them changed (:mod:`buildkit.builder.configure.configure_state`).

The driver owns when to configure; this module owns what a configure is told, so that
the command and its record are made from one place and can never disagree.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from buildkit.builder.configure import file_api
from buildkit.builder.configure.configure_state import TOOL_LABELS, python_identity
from buildkit.builder.configure.torch_env import project_uses_torch
from buildkit.builder.toolchain import cuda_arch
from buildkit.builder.toolchain.compiler_checks import named_compilers
from buildkit.builder.toolchain.dist_session import LOCAL_POOL, distributed_launcher
from buildkit.builder.toolchain.jobs import cpu_count
from buildkit.builder.toolchain.tools import Toolchain
from buildkit.config.modes import Distribution
from buildkit.config.options import BuildOptions, merged_prefix_path

# FindPython (and pybind11's older FindPythonInterp/Libs) cache what they found
# under these names; -U drops them so they are looked up again for the new Python.
PYTHON_CACHE_PATTERNS = ("Python_*", "Python3_*", "PYTHON_*", "_Python*", "_PYTHON*")

# The install RPATH of every configure unless the project sets its own: the library's own folder.
DEFAULT_INSTALL_RPATH = {"linux": "$ORIGIN", "darwin": "@loader_path"}


@dataclass(frozen=True)
class ConfigureArguments:
    options: BuildOptions
    source_dir: Path
    build_dir: Path
    configured_prefix: Path  # CMAKE_INSTALL_PREFIX; a wheel build installs elsewhere with --prefix
    prefix_path: tuple[str, ...]  # the build environment's site-packages and CMake packages
    module_path: tuple[str, ...]  # the build environment's cmake.module folders
    extra_defines: Mapping[str, str]  # what the project sets (its SKBUILD_* variables...)
    develop: bool  # an in-place build for the edit loop: one CUDA architecture
    # Distributed builds: the depth of the job pool that keeps local-heavy steps to this machine's
    # means (None: its cores).
    local_jobs: int | None = None

    def launcher(self) -> str | None:
        # ccache/sccache are worth using whenever they are installed; an explicit
        # BUILDKIT_COMPILER_LAUNCHER (or a forwarded -D) wins, and "none" turns it off.
        if distributed := self.distributed_launcher():
            return ";".join(distributed)
        if self.options.compiler_launcher:
            return None if self.options.compiler_launcher.lower() == "none" else self.options.compiler_launcher
        return shutil.which("ccache") or shutil.which("sccache")

    def distributed_launcher(self) -> list[str] | None:
        """sccache at the build folder's own server (BUILDKIT_DIST=sccache); None for local compiles."""
        if self.options.dist is not Distribution.SCCACHE:
            return None
        return distributed_launcher(self.options.compiler_launcher, self.build_dir)

    def local_pool_depth(self) -> int:
        return self.local_jobs or cpu_count()

    def job_pools(self) -> dict[str, str]:
        """A distributed build's CMake job pool: ninja runs as many compiles as the cluster has slots, and
        the steps that stay on this machine (links, which also make static archives and CUDA device
        links, and precompiled headers) share a pool sized to its cores and memory."""
        if self.options.dist is not Distribution.SCCACHE:
            return {}
        return {"CMAKE_JOB_POOLS": f"{LOCAL_POOL}={self.local_pool_depth()}", "CMAKE_JOB_POOL_LINK": LOCAL_POOL,
                "CMAKE_JOB_POOL_PRECOMPILE_HEADER": LOCAL_POOL, "BUILDKIT_LOCAL_JOB_POOL": LOCAL_POOL}

    def torch_pch(self) -> str:
        """BUILDKIT_TORCH_PCH for cmake/BuildkitTorch.cmake (read by torch extensions only)."""
        return "ON" if self.options.torch_precompiled_headers else "OFF"

    def torch_pch_min_sources(self) -> str:
        """BUILDKIT_TORCH_PCH_MIN_SOURCES: how many C++ sources must share precompiled torch headers
        for a build to compile them.  A develop build always does: the edit loop recompiles one
        source, which they make several times faster.  A wheel is built once: compiling the header
        first is a step no job runs beside, worth it only when each of the jobs has more than two
        sources to compile (a source with the header costs about half of one without)."""
        if self.develop:
            return "0"
        return str(2 * (self.options.jobs or cpu_count()) + 1)

    @cached_property
    def cuda_architectures(self) -> tuple[str | None, str]:
        """CMAKE_CUDA_ARCHITECTURES (None: the project's choice), and what a develop build says of it."""
        return cuda_arch.architectures_for_build(self.options, develop=self.develop)

    def command(self, tools: Toolchain, build_type: str, *, uses_ninja: bool, forget_python: bool = False) -> list[str]:
        """The cmake argument list; never a shell string, so values arrive verbatim."""
        o = self.options
        command = [str(tools.cmake.path), "-S", str(self.source_dir), "-B", str(self.build_dir),
                   "--no-warn-unused-cli"]  # buildkit passes variables not every project reads
        if o.cmake_generator:
            command += ["-G", o.cmake_generator]
        if forget_python:
            command += [f"-U{pattern}" for pattern in PYTHON_CACHE_PATTERNS]
        defines = {"CMAKE_BUILD_TYPE": build_type, "CMAKE_INSTALL_PREFIX": str(self.configured_prefix),
                   "CMAKE_EXPORT_COMPILE_COMMANDS": "ON",
                   "Python_EXECUTABLE": sys.executable, "Python3_EXECUTABLE": sys.executable}
        if tools.ninja is not None and uses_ninja:
            defines["CMAKE_MAKE_PROGRAM"] = str(tools.ninja.path)
        if prefix := merged_prefix_path(o, self.prefix_path):
            defines["CMAKE_PREFIX_PATH"] = prefix
        if launcher := self.launcher():
            defines.update({f"CMAKE_{lang}_COMPILER_LAUNCHER": launcher for lang in ("C", "CXX", "CUDA")})
        if architectures := self.cuda_architectures[0]:
            defines["CMAKE_CUDA_ARCHITECTURES"] = architectures
        defines.update(self.job_pools())
        defines["BUILDKIT_TORCH_PCH"] = self.torch_pch()
        if project_uses_torch(self.source_dir / "CMakeLists.txt"):  # else a develop and a wheel build would differ
            defines["BUILDKIT_TORCH_PCH_MIN_SOURCES"] = self.torch_pch_min_sources()
        if rpath := DEFAULT_INSTALL_RPATH.get(sys.platform):
            # An installed shared library finds its siblings wherever the wheel is unpacked
            # (auditwheel needs it too). A project's own set(CMAKE_INSTALL_RPATH) or a
            # target's INSTALL_RPATH overrides this cache default; so does a user's -D.
            defines["CMAKE_INSTALL_RPATH"] = rpath
        defines.update(o.cmake_defines)  # the user's -D values win over buildkit's defaults
        if self.module_path:  # after the user's own folders, so that their Find modules win
            user = defines.get("CMAKE_MODULE_PATH", "").split(";")
            defines["CMAKE_MODULE_PATH"] = ";".join(p for p in [*user, *self.module_path] if p)
        defines.update(self.extra_defines)
        return [*command, *(f"-D{name}={value}" for name, value in defines.items()), *o.cmake_args]

    def inputs(self, tools: Toolchain | None, build_type: str) -> dict[str, str]:
        """Everything a configure depends on, as label -> value (the labels name changes)."""
        o = self.options
        inputs = {
            "source folder": str(self.source_dir),
            "generator": o.cmake_generator,
            "build type": build_type,
            "install prefix": str(self.configured_prefix),
            "CMAKE_PREFIX_PATH": merged_prefix_path(o, self.prefix_path),
            "CMAKE_MODULE_PATH (entry points)": ";".join(self.module_path) or None,
            "compiler launcher": self.launcher(),
            "job pools": " ".join(f"{k}={v}" for k, v in self.job_pools().items()) or None,
            "CUDA architectures": self.cuda_architectures[0],
            "torch precompiled headers": self.torch_pch(),
            "default install RPATH": DEFAULT_INSTALL_RPATH.get(sys.platform),
            "CMake File API queries": file_api.query_kinds(),
            "CMAKE_ARGS": shlex.join(o.cmake_args),
            "Python": python_identity(),
            **{f"-D{name}": value for name, value in o.cmake_defines},
            **{f"-D{name} (set by buildkit)": value for name, value in self.extra_defines.items()},
            **{f"environment {name}": value for name, value in o.cmake_environment},
            **{f"environment {name}": value for name, value in named_compilers(o).items()},
        }
        for kind, tool in (tools.tools().items() if tools else ()):
            if tool is not None:
                inputs[TOOL_LABELS[kind]] = f"{tool.path} {tool.version}"
        return {label: value for label, value in inputs.items() if value is not None}
