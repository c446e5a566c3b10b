"""Finds and preloads tensorlet's native libraries before `tensorlet._C` is imported.

Like torch, the package looks first in its own `lib/` (a full install or a
wheel with everything), then in the library-only distribution `libtensorlet`
(a top-level `libtensorlet/` directory with `lib/`, `include/`, `share/cmake/`).
Libraries are loaded with RTLD_GLOBAL so that the `_C` stub and C++ extensions
resolve their symbols against these copies."""

from __future__ import annotations

import ctypes
import importlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Optional

PACKAGE_DIR = Path(__file__).resolve().parent
LIBRARY_DISTRIBUTION = "libtensorlet"
CORE_LIBRARY = "libtensorlet.so"
PYTHON_LIBRARY = "libtensorlet_python.so"
CUDA_LIBRARY = "libtensorlet_cuda.so"


def package_version() -> str:
    """tensorlet's version: version.py (written by buildkit), _build_config.py (CMake), version.txt."""
    try:
        from .version import __version__  # type: ignore[import-not-found]
        return __version__
    except ImportError:
        pass
    try:
        from ._build_config import version  # type: ignore[import-not-found]
        return version
    except ImportError:
        pass
    txt = PACKAGE_DIR.parent / "version.txt"
    return txt.read_text().strip() if txt.exists() else "0+unknown"


def library_distribution_root() -> Optional[Path]:
    try:
        spec = importlib.util.find_spec(LIBRARY_DISTRIBUTION)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return Path(locations[0])
    return Path(spec.origin).parent if spec.origin else None


def _preload_cuda_runtime() -> None:
    """libcudart where buildkit's generated loader finds it: already loaded (torch's), NVIDIA's
    runtime wheel, conda, the system. Only a CUDA build has that loader (`_native.py`)."""
    if importlib.util.find_spec(f"{__package__}._native") is not None:
        importlib.import_module(f"{__package__}._native").load()


class NativeLibraries:
    def __init__(self) -> None:
        self.root: Optional[Path] = None       # directory holding lib/, include/, share/
        self.source = ""                       # "tensorlet" or "libtensorlet"
        self.core: Optional[ctypes.CDLL] = None
        self.cuda: Optional[ctypes.CDLL] = None
        self.cuda_error: Optional[str] = None

    @property
    def lib_dir(self) -> Path:
        assert self.root is not None
        return self.root / "lib"


def _check_library_version(root: Path) -> None:
    try:
        lib_version = importlib.metadata.version(LIBRARY_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return  # a source-tree libtensorlet directory has no metadata to compare
    mine = package_version()
    # The same exact version the wheel pins (local label included): the bindings were
    # compiled against that build's headers, and any other build may differ in ABI.
    if lib_version != mine:
        raise ImportError(
            f"tensorlet {mine} needs the matching native libraries, but {LIBRARY_DISTRIBUTION} {lib_version} is "
            f"installed (at {root}). Install the matching version: pip install '{LIBRARY_DISTRIBUTION}=={mine}'")


def load() -> NativeLibraries:
    libs = NativeLibraries()
    candidates = [("tensorlet", PACKAGE_DIR)]
    lib_root = library_distribution_root()
    if lib_root is not None:
        candidates.append((LIBRARY_DISTRIBUTION, lib_root))
    for source, root in candidates:
        if (root / "lib" / CORE_LIBRARY).exists():
            libs.root, libs.source = root, source
            break
    if libs.root is None:
        searched = ", ".join(str(r / "lib") for _, r in candidates)
        raise ImportError(
            f"tensorlet could not find its native library {CORE_LIBRARY} (searched: {searched}). It is provided by "
            f"the distribution '{LIBRARY_DISTRIBUTION}': pip install '{LIBRARY_DISTRIBUTION}=={package_version()}'"
            " -- or, in a source checkout, build in place through buildkit: `buildkit develop examples/tensorlet` "
            "(or `python setup.py develop` in examples/tensorlet).")
    if libs.source == LIBRARY_DISTRIBUTION:
        _check_library_version(libs.root)
    mode = ctypes.RTLD_GLOBAL
    libs.core = ctypes.CDLL(str(libs.lib_dir / CORE_LIBRARY), mode=mode)
    # CUDA is optional: a CPU-only machine must never need libcudart.
    cuda_path = libs.lib_dir / CUDA_LIBRARY
    if cuda_path.exists() and os.environ.get("TENSORLET_DISABLE_CUDA", "0") != "1":
        try:
            _preload_cuda_runtime()
            libs.cuda = ctypes.CDLL(str(cuda_path), mode=mode)
        except OSError as e:
            libs.cuda_error = str(e)
    # The bindings ship with the Python package; fall back to the library dir.
    for d in (PACKAGE_DIR / "lib", libs.lib_dir):
        if (d / PYTHON_LIBRARY).exists():
            ctypes.CDLL(str(d / PYTHON_LIBRARY), mode=mode)
            break
    else:
        raise ImportError(f"tensorlet could not find {PYTHON_LIBRARY} in {PACKAGE_DIR / 'lib'}; the tensorlet "
                          "installation is incomplete (reinstall tensorlet, or, in a source checkout, rebuild with "
                          "`buildkit develop examples/tensorlet`)")
    return libs
