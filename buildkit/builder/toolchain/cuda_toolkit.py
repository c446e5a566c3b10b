"""Which CUDA toolkit a build compiles with: NVIDIA's toolchain wheels, or the machine's own.

From CUDA 13 on, NVIDIA's wheels install the whole toolchain into one prefix of
site-packages, ``nvidia/cu<major>``: ``nvidia-cuda-nvcc`` (``bin/nvcc``, ptxas, fatbinary,
nvlink, cudafe++), ``nvidia-nvvm`` (``nvvm/bin/cicc``, libdevice), ``nvidia-cuda-crt`` and
``nvidia-cuda-runtime`` (headers, ``lib/libcudart.so.13`` and the static runtime),
``nvidia-cuda-cccl`` (``include/cccl``).  The major version is the folder's: the library
wheels' own versions are not CUDA versions.

``cuda-toolkit`` (``BUILDKIT_CUDA_TOOLKIT``) chooses:

* ``wheel``: the wheels' prefix, looked for in cuda-pathfinder's order (NVIDIA's wheels in
  the build environment's site folders, in import order; the newest major of a folder
  first).  None there is an error naming what to install.
* ``system``: CMake's own search, as without this setting.
* ``auto``: the system's toolkit when it has the CUDA major asked for (torch's, for a torch
  extension; else the wheels' when there are any), else the wheels'.  ``CUDACXX`` (and in a
  buildkit.torch project, where they keep cpp_extension's meaning, ``CUDA_HOME`` or
  ``CUDA_PATH``) names a system toolkit and so chooses it.

The prefix found is given to CMake as ``CMAKE_CUDA_COMPILER``, ``CUDAToolkit_ROOT`` and
``CUDA_TOOLKIT_ROOT_DIR`` (FindCUDAToolkit, torch's CMake config and the older FindCUDA all
look there first), inside the build-environment mirror, so that an isolated build's
throw-away environment does not make the next build configure again.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from buildkit._util import console
from buildkit.builder.configure.cmake_cache import CMakeCache, is_cmake_off, project_uses_cuda
from buildkit.builder.configure.torch_env import installed_torch, project_uses_torch
from buildkit.builder.toolchain.cuda_wheel_parts import nvcc_release, runtime_of_nvcc_release, whole_release_problem
from buildkit.builder.toolchain.tools import real_program
from buildkit.config.modes import CudaToolkit
from buildkit.config.options import BuildOptions
from buildkit.errors import ToolchainError

# The first CUDA whose wheels share one prefix (CUDA 12's are split: nvidia/cuda_nvcc...),
# and the major an isolated build asks for when nothing else says which.
FIRST_WHEEL_MAJOR = 13
WHEEL_FOLDER = "nvidia"
_PREFIX = re.compile(r"^cu(\d+)$")
# include/cuda.h: `#define CUDA_VERSION 13000` (major * 1000 + minor * 10), some 15 KB into the file.
_CUDA_VERSION = re.compile(rb"^#define\s+CUDA_VERSION\s+(\d+)", re.M)
# option(USE_CUDA "..." OFF), set(USE_CUDA OFF CACHE BOOL "..."): the switch's default.
_USE_CUDA_DEFAULT = re.compile(r'\b(?:option\s*\(\s*USE_CUDA\s+"[^"]*"\s+(\w+)|set\s*\(\s*USE_CUDA\s+(\w+)\s+CACHE)',
                               re.I)
_HEADER_BYTES = 256 * 1024  # cuda.h is 1.3 MB; its version comes first
DEFAULT_SYSTEM_NVCC = "/usr/local/cuda/bin/nvcc"


@dataclass(frozen=True)
class FoundToolkit:
    """A CUDA toolkit: its prefix (``bin/nvcc``, ``include``, ``lib``), its version, how it was found."""

    source: CudaToolkit  # WHEEL or SYSTEM
    root: Path
    # "13.0": the compiler's release (nvidia-cuda-nvcc's for the wheels, whose runtime headers
    # may be another's), else include/cuda.h's; None when neither says
    version: str | None
    found_by: str  # "site-packages", "CUDACXX", "CUDA_HOME", "CUDA_PATH", "PATH", "/usr/local/cuda"
    # The wheels' prefix in another site folder whose runtime (headers, libcudart) is nvcc's
    # release, where the one beside nvcc is not: mirrored over it (:mod:`.cuda_wheel_parts`).
    runtime_root: Path | None = None

    @property
    def major(self) -> int | None:
        return int(self.version.split(".")[0]) if self.version else None

    @property
    def nvcc(self) -> Path:
        return self.root / "bin" / "nvcc"

    def describe(self) -> str:
        what = "NVIDIA's wheels" if self.source is CudaToolkit.WHEEL else "the system's toolkit"
        runtime = (f", its runtime's headers and libraries from {self.runtime_root} (nvcc's release; the one beside "
                   "nvcc is another's, which nvcc's unversioned requirement brought)") if self.runtime_root else ""
        return (f"{what}, CUDA {self.version or '(version unknown)'} at {self.root} (found by "
                f"{self.found_by}){runtime}")


@dataclass(frozen=True)
class ToolkitChoice:
    """The toolkit a build compiles with (None: CMake's own search, and nothing to say), and
    the one line that says which, when there was a choice to make."""

    toolkit: FoundToolkit | None
    note: str | None = None

    @property
    def from_wheels(self) -> bool:
        return self.toolkit is not None and self.toolkit.source is CudaToolkit.WHEEL


@dataclass(frozen=True)
class CudaRequest:
    """Whether a project compiles CUDA, and the CUDA of the torch it builds against."""

    compiles_cuda: bool
    torch_cuda: str | None = None  # "13.0"; None without torch or for a CPU build of it
    drop_in: bool = False  # a buildkit.torch project: CUDA_HOME and CUDA_PATH name its toolkit

    @property
    def torch_major(self) -> int | None:
        return int(self.torch_cuda.split(".")[0]) if self.torch_cuda else None


def cuda_request(cache: CMakeCache | None, cmakelists: Path, defines: Mapping[str, str], *,
                 drop_in: bool) -> CudaRequest:
    """What the project asks of CUDA: its CMakeLists.txt (or cache) enables CUDA, or it builds
    against a CUDA build of torch (``find_package(Torch)``, ``buildkit_torch_extension``, a
    buildkit.torch setup.py: ``drop_in``).  ``defines`` are the forwarded ``-D`` values."""
    torch = installed_torch() if drop_in or project_uses_torch(cmakelists) else None
    torch_cuda = torch.cuda if torch else None
    return CudaRequest(_compiles_cuda(cache, cmakelists, defines) or bool(torch_cuda), torch_cuda, drop_in)


def _compiles_cuda(cache: CMakeCache | None, cmakelists: Path, defines: Mapping[str, str]) -> bool:
    """``USE_CUDA`` (PyTorch's switch) as this build asks for it, else as the cache has it; a
    cache whose CUDA compiler was found; else a CMakeLists.txt that enables the language, unless
    its ``USE_CUDA`` switch is off by default (an optional CUDA part, as tensorlet's)."""
    if "USE_CUDA" in defines:
        return not is_cmake_off(defines["USE_CUDA"])
    if cache is not None and "USE_CUDA" in cache:
        return cache.get_bool("USE_CUDA")
    if cache is not None and project_uses_cuda(cache, cmakelists):  # its CUDA compiler found
        return True
    if not project_uses_cuda(None, cmakelists):
        return False
    try:
        switch = _USE_CUDA_DEFAULT.search(cmakelists.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        switch = None
    return switch is None or not is_cmake_off(switch[1] or switch[2])


def toolkit_version(root: Path) -> str | None:
    """``major.minor`` of the toolkit in ``root``, from its ``include/cuda.h``."""
    try:
        with open(root / "include" / "cuda.h", "rb") as header:
            match = _CUDA_VERSION.search(header.read(_HEADER_BYTES))
    except OSError:
        return None
    number = int(match[1]) if match else 0
    return f"{number // 1000}.{number % 1000 // 10}" if number else None


def wheel_toolkits(site_dirs: Sequence[str]) -> list[FoundToolkit]:
    """The toolchain prefixes of NVIDIA's wheels (``nvidia/cu<N>`` with a ``bin/nvcc``) in
    ``site_dirs``, in their order, the newest major of each folder first."""
    found = []
    for folder in site_dirs:
        prefixes = []
        try:
            with os.scandir(os.path.join(folder, WHEEL_FOLDER)) as entries:
                prefixes = [(int(m[1]), e.path) for e in entries if (m := _PREFIX.match(e.name))]
        except OSError:  # no nvidia/ folder there
            continue
        for major, prefix in sorted(prefixes, reverse=True):
            root = Path(prefix)
            if major >= FIRST_WHEEL_MAJOR and (root / "bin" / "nvcc").is_file():
                version = nvcc_release(root) or toolkit_version(root) or f"{major}"
                found.append(FoundToolkit(CudaToolkit.WHEEL, root, version, f"the build environment's {folder}"))
    return found


def system_toolkit(options: BuildOptions, request: CudaRequest) -> FoundToolkit | None:
    """The machine's toolkit where CMake (and for a buildkit.torch project cpp_extension) looks:
    CUDACXX, CUDA_HOME, CUDA_PATH, nvcc on PATH (a forwarding wrapper followed to its toolkit),
    /usr/local/cuda."""
    homes = [(name, os.path.join(home, "bin", "nvcc")) for name, home in _homes(options, request)]
    candidates = [("CUDACXX", options.cudacxx), *homes, ("PATH", shutil.which("nvcc")),
                  ("/usr/local/cuda", DEFAULT_SYSTEM_NVCC)]
    for found_by, nvcc in candidates:
        if nvcc and os.path.isfile(nvcc):
            root = real_program(Path(nvcc)).resolve().parent.parent
            return FoundToolkit(CudaToolkit.SYSTEM, root, toolkit_version(root), found_by)
    return None


def _homes(options: BuildOptions, request: CudaRequest) -> list[tuple[str, str]]:
    """CUDA_HOME and CUDA_PATH where they name the toolkit (a buildkit.torch project: CMake itself reads neither)."""
    if not request.drop_in:
        return []
    return [(name, value) for name, value in (("CUDA_HOME", options.cuda_home), ("CUDA_PATH", options.cuda_path))
            if value]


def named_toolkit(options: BuildOptions, request: CudaRequest) -> str | None:
    """The variable that names a system toolkit explicitly (CUDACXX; CUDA_HOME, CUDA_PATH), if one does."""
    named = [("CUDACXX", options.cudacxx), *_homes(options, request)]
    return next((name for name, value in named if value), None)


def install_hint(major: int | None) -> str:
    """What to install for a toolkit from wheels of ``major`` (the newest when None)."""
    return f"pip install {' '.join(repr(r) for r in toolkit_requirements(major))}"


def toolkit_requirements(major: int | None, *, newest_minor: int | None = None) -> list[str]:
    """The toolchain wheels of one CUDA major (the compiler wheels' versions are CUDA versions),
    ``newest_minor`` the newest minor allowed (a torch extension's: torch's CUDA)."""
    major = major or FIRST_WHEEL_MAJOR
    upper = f"{major}.{newest_minor + 1}" if newest_minor is not None else f"{major + 1}"
    # nvcc's own Requires-Dist (nvvm, crt, runtime) names no version: each is pinned here. CCCL's
    # versions are CUDA's up to 13.2 only (13.3.5.0.6 is CCCL 3.5 for CUDA 13), and one CCCL
    # supports every CUDA of its major: pinned to the major alone, or an isolated build beside
    # torch 2.15 (whose nvshmem brings the newest CCCL) is refused by pip as a conflict.
    compiler = [f"{name}>={major},<{upper}" for name in
                ("nvidia-cuda-nvcc", "nvidia-nvvm", "nvidia-cuda-crt", "nvidia-cuda-runtime")]
    return [*compiler, f"nvidia-cuda-cccl>={major},<{major + 1}"]


def choose_toolkit(setting: CudaToolkit, options: BuildOptions, site_dirs: Sequence[str],
                   request: CudaRequest = CudaRequest(True)) -> ToolkitChoice:
    """The toolkit ``setting`` chooses among the wheels in ``site_dirs`` and the system's, for
    what ``request`` asks (a torch extension: torch's CUDA major)."""
    if setting is CudaToolkit.SYSTEM:
        return ToolkitChoice(system_toolkit(options, request))
    wheels = wheel_toolkits(site_dirs)
    wanted = request.torch_major or (wheels[0].major if wheels else None)
    matching = [w for w in wheels if wanted is None or w.major == wanted]
    for_major = f" of CUDA {wanted}" if wanted else ""
    if setting is CudaToolkit.WHEEL:
        if not matching:
            others = f" (there are wheels of {', '.join(str(w.root) for w in wheels)})" if wheels else ""
            raise ToolchainError(
                f"cuda-toolkit = \"wheel\" asks for the CUDA toolkit from NVIDIA's wheels, but the build environment "
                f"has none{for_major}: no site folder holds nvidia/cu<N>/bin/nvcc{others}.",
                f"Install the toolchain wheels where the build runs: {install_hint(wanted)} (an isolated `pip "
                f"install` or `python -m build` gets them as build requirements), or set cuda-toolkit = \"system\" "
                f"(BUILDKIT_CUDA_TOOLKIT=system) to use the machine's toolkit.")
        if variable := named_toolkit(options, request):
            console.warn(f"{variable} names a CUDA toolkit, but cuda-toolkit = \"wheel\" compiles with NVIDIA's "
                         f"wheels at {matching[0].root}; {variable} is not used (cuda-toolkit = \"auto\" or "
                         f"\"system\" uses it).")
        chosen = _whole(matching[0], site_dirs)
        return ToolkitChoice(chosen, f"CUDA toolkit: {chosen.describe()} (cuda-toolkit = \"wheel\")")
    system, named = system_toolkit(options, request), named_toolkit(options, request)
    if system is not None and (named or wanted is None or system.major == wanted):
        # Said only when the wheels were there to choose instead.
        why = (f"{system.found_by} names it" if named
               else f"it is CUDA {wanted}, as asked for" if wanted else "there is one")
        note = (f"CUDA toolkit: {system.describe()}; cuda-toolkit = \"auto\" prefers it over NVIDIA's wheels in "
                f"{wheels[0].root} because {why} (cuda-toolkit = \"wheel\" takes the wheels')") if wheels else None
        return ToolkitChoice(system, note)
    if matching:
        instead = (f"the system's is CUDA {system.version} ({system.root})" if system is not None
                   else "there is no system toolkit")
        chosen = _whole(matching[0], site_dirs)
        return ToolkitChoice(chosen, f"CUDA toolkit: {chosen.describe()}; cuda-toolkit = \"auto\" takes the wheels' "
                                     f"because {instead}")
    return ToolkitChoice(system)


def _whole(wheels: FoundToolkit, site_dirs: Sequence[str]) -> FoundToolkit:
    """``wheels``, when its prefix holds every part of one release of the compiler (with the
    runtime of nvcc's release from another site folder where the one beside nvcc is not); else
    refused by name before CMake's first compile fails on it (:mod:`.cuda_wheel_parts`)."""
    problem = whole_release_problem(wheels.root, int(wheels.root.name[2:]))
    if problem is not None:
        why, fix = problem
        raise ToolchainError(why[0].upper() + why[1:], f"{fix}; or set cuda-toolkit = \"system\" "
                                                       "(BUILDKIT_CUDA_TOOLKIT=system) to use the machine's toolkit.")
    return replace(wheels, runtime_root=runtime_of_nvcc_release(wheels.root, site_dirs))


def build_requirements(setting: CudaToolkit, options: BuildOptions, request: CudaRequest) -> list[str]:
    """The toolchain wheels an isolated build of a project that compiles CUDA needs: under
    ``wheel`` always, under ``auto`` where this machine has no toolkit of the CUDA major asked
    for; one major (``>=13,<14``), and for a torch extension none newer than torch's CUDA."""
    major, minor = (int(part) for part in (request.torch_cuda or "0.0").split(".")[:2])
    wanted = major or None
    if setting is CudaToolkit.SYSTEM or (wanted is not None and wanted < FIRST_WHEEL_MAJOR):
        return []  # CUDA 12's wheels are no toolkit in one prefix: the machine's toolkit compiles
    system = system_toolkit(options, request)
    if setting is CudaToolkit.AUTO and system is not None and (
            named_toolkit(options, request) or wanted is None or system.major == wanted):
        return []
    return toolkit_requirements(wanted, newest_minor=minor if wanted else None)


def toolkit_defines(choice: ToolkitChoice, root: str, user_defines: Sequence[tuple[str, str]]) -> dict[str, str]:
    """What CMake is told of a toolkit from wheels whose prefix, as CMake sees it, is ``root``
    (the build-environment mirror's copy): its nvcc for the CUDA language, and the prefix for
    FindCUDAToolkit, torch's CMake config and FindCUDA.  A ``-D`` of the user's own wins."""
    if not choice.from_wheels:
        return {}
    named = {name for name, _ in user_defines}
    defines = {"CMAKE_CUDA_COMPILER": os.path.join(root, "bin", "nvcc"), "CUDAToolkit_ROOT": root,
               "CUDA_TOOLKIT_ROOT_DIR": root}
    return {name: value for name, value in defines.items() if name not in named}
