"""The three wheel modes: one full wheel, or a library-only and a python-only wheel."""

from __future__ import annotations

import enum


class WheelMode(enum.Enum):
    FULL = "full"
    LIBRARY_ONLY = "library-only"
    PYTHON_ONLY = "python-only"


class InstallPrefix(enum.Enum):
    """Where ``cmake --install`` puts files: the package's folder (PyTorch's layout,
    ``install(... DESTINATION lib)``) or the wheel's root (scikit-build-core's,
    ``install(... DESTINATION <package>)``)."""

    PACKAGE = "package"
    WHEEL_ROOT = "wheel-root"


class VersionPolicy(enum.Enum):
    """How far a wheel's requirement on a library it was built against lets the library move:
    the version built against exactly, or a newer release with the same major.minor or
    the same major (and never an older one: it may lack what the build used)."""

    EXACT = "exact"
    SAME_MINOR = "same-minor"
    SAME_MAJOR = "same-major"


class CudaRuntime(enum.Enum):
    """Where a CUDA build's ``libcudart`` comes from at run time."""

    WHEEL = "wheel"  # NVIDIA's runtime wheel, required and linked where pip installs it
    VENDOR = "vendor"  # copied into the wheel by auditwheel repair
    SYSTEM = "system"  # the machine's CUDA installation; neither required nor copied


class CudaToolkit(enum.Enum):
    """Where a CUDA build's compiler, headers and libraries come from at build time."""

    WHEEL = "wheel"  # NVIDIA's toolchain wheels in the build environment (site-packages/nvidia/cu<N>)
    SYSTEM = "system"  # the machine's CUDA installation, found as CMake finds it
    AUTO = "auto"  # the system's when its CUDA major is the one asked for, else the wheels'


class Distribution(enum.Enum):
    """Where a build's compiles run: on this machine, or on an sccache-dist cluster."""

    NONE = "none"
    SCCACHE = "sccache"
