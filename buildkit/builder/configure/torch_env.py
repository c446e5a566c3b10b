"""PyTorch in the build environment: whether a project builds against it, and which torch is there.

A torch extension's CMakeLists calls ``find_package(Torch)`` or BuildkitTorch.cmake's
``buildkit_torch_extension``; torch's CMake package ships inside its wheel
(``torch/share/cmake/Torch``).  The torch found here is the one of the running
interpreter, never imported (that takes seconds): its version comes from its
distribution metadata and its CUDA version from ``torch/version.py``.

Under pip's build isolation that is the torch pip put into the isolated environment,
while the interpreter's own site-packages (where the wheel will be installed, and which
is off ``sys.path`` during the build) may hold another: :func:`isolation_mismatch` says
so, because an extension built against one torch does not load into another.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from buildkit.builder.toolchain.tools import Compilers
from buildkit.config.options import BuildOptions

_USES_TORCH = re.compile(r"\b(?:find_package\s*\(\s*Torch\b|buildkit_torch_extension\s*\()", re.I)
# torch/version.py: `cuda: Optional[str] = '12.8'` or `cuda = None`.
_CUDA_VERSION = re.compile(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", re.M)
CMAKE_FOLDER = Path("share", "cmake", "Torch")
DEFAULT_CUDA_HOME = "/usr/local/cuda"


def project_uses_torch(cmakelists: Path) -> bool:
    """Whether the top-level CMakeLists.txt finds torch (find_package(Torch), buildkit_torch_extension)."""
    try:
        return _USES_TORCH.search(cmakelists.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


@dataclass(frozen=True)
class InstalledTorch:
    version: str  # "2.13.0+cpu"
    cuda: str | None  # the CUDA version of a CUDA build, None for a CPU build
    folder: Path  # site-packages/torch

    @property
    def cmake_dir(self) -> Path | None:
        """The folder of TorchConfig.cmake, None when this torch has none."""
        folder = self.folder / CMAKE_FOLDER
        return folder if (folder / "TorchConfig.cmake").is_file() else None

    @property
    def build(self) -> str:
        return f"CUDA {self.cuda} build" if self.cuda else "CPU build"


def installed_torch() -> InstalledTorch | None:
    """The torch this interpreter would import, without importing it; None when there is none."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    # importlib.metadata costs ~9 ms: the driver imports this module on every build, and
    # only a configure of a torch project (or buildkit doctor) asks for torch's version.
    from importlib import metadata

    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:  # a source checkout on sys.path
        version = "?"
    return InstalledTorch(version, cuda_version(folder), folder)


def cuda_version(folder: Path) -> str | None:
    """``torch.version.cuda`` of the torch in ``folder`` (from its version.py, without importing
    it); None for a CPU build or no readable version.py."""
    try:
        match = _CUDA_VERSION.search((Path(folder) / "version.py").read_text(encoding="utf-8"))
    except OSError:
        return None
    return match[1] if match else None


def target_torch_version() -> str | None:
    """The torch installed in this interpreter's own site-packages (``sysconfig``'s purelib),
    whether or not it is on ``sys.path``; None when there is none."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    found = sorted(purelib.glob("torch-*.dist-info"))
    return found[0].name[len("torch-"):-len(".dist-info")] if found else None


def isolation_mismatch(torch: InstalledTorch | None) -> str | None:
    """A warning when the build runs against another torch than the one installed where the
    build's interpreter installs: pip's build isolation brought its own."""
    target = target_torch_version()
    if torch is None or target is None or target == torch.version:
        return None
    return (f"this build compiles against torch {torch.version} ({torch.folder}), from an isolated build "
            f"environment, but {sysconfig.get_paths()['purelib']} has torch {target}: an extension built "
            f"against one torch does not load into another. Build with --no-build-isolation (or `buildkit "
            f"develop`) against the installed torch; docs/migration/from-cpp-extension.md says more.")


# torch/utils/cpp_extension.py: `min_supported_cpython = "0x030A0000"  # Python 3.10 hexcode`.
_LIMITED_API = re.compile(r"^min_supported_cpython\s*=\s*['\"]0x0*([0-9A-Fa-f])([0-9A-Fa-f]{2})[0-9A-Fa-f]{4}['\"]",
                          re.M)


def cpp_extension_limited_api(folder: Path) -> str | None:
    """The stable ABI cpp_extension builds ``py_limited_api=True`` extensions for (its
    ``Py_LIMITED_API`` define, from its source, without importing it): "3.10" for torch
    2.13; None when that source names none."""
    try:
        match = _LIMITED_API.search((Path(folder) / "utils" / "cpp_extension.py").read_text(encoding="utf-8"))
    except OSError:
        return None
    return f"{int(match[1], 16)}.{int(match[2], 16)}" if match else None


def find_cuda_home(options: BuildOptions, nvcc_on_path: str | None) -> str | None:
    """The CUDA toolkit as cpp_extension finds it: CUDA_HOME, CUDA_PATH, the folder above the
    ``bin/`` of the nvcc on PATH (``nvcc_on_path``), else /usr/local/cuda where it exists."""
    if options.cuda_home or options.cuda_path:
        return options.cuda_home or options.cuda_path
    if nvcc_on_path:
        return os.path.dirname(os.path.dirname(nvcc_on_path))
    return DEFAULT_CUDA_HOME if os.path.exists(DEFAULT_CUDA_HOME) else None


def compiler_findings(torch: InstalledTorch, compilers: Compilers, *, cuda: bool,
                      check_abi: bool) -> tuple[list[str], str | None]:
    """What cpp_extension checks before it compiles: warnings (a C++ compiler other than GCC
    or Clang, a GCC older than 5, an nvcc whose CUDA minor version differs from torch's) and
    an error (an nvcc of another CUDA major version than torch's build).  ``check_abi``
    False (TORCH_DONT_CHECK_COMPILER_ABI) leaves out the compiler's own checks."""
    warnings = []
    cxx = compilers.cxx
    if check_abi and cxx is not None:
        real = os.path.basename(os.path.realpath(cxx.path))
        if not any(name in real for name in ("g++", "gcc", "clang")):
            warnings.append(f"the C++ compiler {cxx.path} ({real}) is neither GCC nor Clang: torch's binaries are "
                            "built with GCC, and another compiler may not share their ABI "
                            "(TORCH_DONT_CHECK_COMPILER_ABI=1 skips this check)")
        elif "clang" not in real and _numbers(cxx.version) < (5,):
            warnings.append(f"the C++ compiler {cxx.path} is GCC {cxx.version}: torch's ABI needs GCC 5 or newer "
                            "(TORCH_DONT_CHECK_COMPILER_ABI=1 skips this check)")
    nvcc = compilers.nvcc
    if not cuda or nvcc is None or torch.cuda is None:
        return warnings, None
    ours, theirs = _numbers(nvcc.version)[:2], _numbers(torch.cuda)[:2]
    if ours[:1] != theirs[:1]:
        return warnings, (f"nvcc {nvcc.path} is CUDA {nvcc.version}, but torch {torch.version} is a CUDA "
                          f"{torch.cuda} build: an extension must be compiled with the CUDA major version torch was")
    if ours != theirs:
        warnings.append(f"nvcc {nvcc.path} is CUDA {nvcc.version} and torch {torch.version} a CUDA {torch.cuda} "
                        "build: a minor version apart, which usually works")
    return warnings, None


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])
