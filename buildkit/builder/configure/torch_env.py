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
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path

_USES_TORCH = re.compile(r"\b(?:find_package\s*\(\s*Torch\b|buildkit_torch_extension\s*\()", re.I)
# torch/version.py: `cuda: Optional[str] = '12.8'` or `cuda = None`.
_CUDA_VERSION = re.compile(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", re.M)
CMAKE_FOLDER = Path("share", "cmake", "Torch")


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
