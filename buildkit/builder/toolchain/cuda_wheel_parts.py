"""Whether a prefix of NVIDIA's toolchain wheels (``<site>/nvidia/cu<N>``) holds one whole
release of the compiler.

The toolchain comes in several wheels that share the prefix.  ``nvidia-cuda-nvcc``'s own
requirements name the others (``nvidia-nvvm``, ``nvidia-cuda-crt``, ``nvidia-cuda-runtime``)
without a version, so pip keeps them neither present (``pip install --no-deps``, an
uninstall) nor together: ``pip install 'nvidia-cuda-nvcc==13.0.*'`` beside an installed
``nvidia-nvvm`` 13.5 leaves both.  Either way CMake's first compile of the CUDA compiler's
identification fails deep in its log (measured with nvcc 13.0.88 and 13.5.37: nvcc of one
release with cicc of the other stops at ``ptxas fatal: Unsupported .version 9.5`` or
``cicc: invalid option: --simt-only``; without ``nvidia-cuda-crt``, ``crt/host_config.h`` is
missing).  So a build that compiles with the wheels is refused before CMake runs, naming the
wheels to install and their release.

The compiler's parts (nvcc, cicc, the crt headers) must be of one release, nvcc's.  The
runtime need only be of the same major (the folder's): its headers of another release
compile with nvcc (measured: nvcc 13.5 with ``nvidia-cuda-runtime`` 13.0.96, nvcc 13.0 with
13.5.37), as a torch that pins the runtime needs.  But torch's CMake config refuses a
toolkit whose ``cuda.h`` is not nvcc's release ("FindCUDA says CUDA version is 13.0 ..., but
the CUDA headers say the version is 13.5"), and pip's isolated build makes one: the
project's build requirements (torch, with its pinned runtime 13.0.96) go into one prefix,
the backend's (nvcc pinned to torch's 13.0) into another, where pip resolves them on their
own and nvcc's unversioned requirement brings the newest runtime.  So where another site
folder holds the runtime of nvcc's release, the toolkit takes its headers and libraries
from there (:func:`runtime_of_nvcc_release`).  ``nvidia-cuda-cccl`` (Thrust, CUB, libcu++) is not
required: a kernel that includes none of them compiles without it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

NVCC_DISTRIBUTION = "nvidia-cuda-nvcc"
RUNTIME_DISTRIBUTION = "nvidia-cuda-runtime"
RUNTIME_MARKER = "include/cuda_runtime.h"


@dataclass(frozen=True)
class WheelPart:
    """One wheel of the toolchain: a file it puts into the prefix, and whether it is part of
    the compiler (of nvcc's own release) or only of its CUDA major."""

    distribution: str
    marker: str
    compiler: bool


WHEEL_PARTS = (
    WheelPart(NVCC_DISTRIBUTION, "bin/nvcc", True),
    WheelPart("nvidia-nvvm", "nvvm/bin/cicc", True),
    WheelPart("nvidia-cuda-crt", "include/crt/host_config.h", True),
    WheelPart(RUNTIME_DISTRIBUTION, RUNTIME_MARKER, False),
)
_RELEASE = re.compile(r"^(\d+)\.(\d+)")


def _site_folder(root: Path) -> Path:
    return root.parent.parent  # <site>/nvidia/cu13


def installed_version(root: Path, distribution: str) -> str | None:
    """The version of ``distribution`` installed in the site folder of the prefix ``root``
    (None: not installed there with its metadata, as in a copy of the files, or a record that
    cannot be read: then what is there is all that can be checked)."""
    found = metadata.distributions(name=distribution, path=[str(_site_folder(root))])
    try:
        return next((d.version for d in found), None)
    except (OSError, UnicodeDecodeError):
        return None


def release(version: str | None) -> str | None:
    """``major.minor`` of a toolchain wheel's version (``13.0.88`` is CUDA 13.0)."""
    match = _RELEASE.match(version or "")
    return f"{match[1]}.{match[2]}" if match else None


def nvcc_release(root: Path) -> str | None:
    """The CUDA release of the prefix's compiler: ``nvidia-cuda-nvcc``'s version."""
    return release(installed_version(root, NVCC_DISTRIBUTION))


def runtime_of_nvcc_release(root: Path, site_dirs: Sequence[str]) -> Path | None:
    """The prefix (``<site>/nvidia/cu13``) of another site folder whose ``nvidia-cuda-runtime`` is
    nvcc's release, where the one beside nvcc in ``root`` is of another; None otherwise."""
    nvcc = nvcc_release(root)
    if nvcc is None or release(installed_version(root, RUNTIME_DISTRIBUTION)) in (None, nvcc):
        return None
    for site in site_dirs:
        prefix = Path(site, root.parent.name, root.name)
        if (prefix != root and (prefix / RUNTIME_MARKER).is_file()
                and release(installed_version(prefix, RUNTIME_DISTRIBUTION)) == nvcc):
            return prefix
    return None


def _pin(part: WheelPart, nvcc: str | None, major: int) -> str:
    if part.compiler and nvcc:
        return f"'{part.distribution}=={nvcc}.*'"
    return f"'{part.distribution}>={major},<{major + 1}'"


def whole_release_problem(root: Path, major: int) -> tuple[str, str] | None:
    """Why the toolchain prefix ``root`` (CUDA ``major``) cannot compile, and what to install;
    None when every part is there and the compiler's parts are of nvcc's release."""
    nvcc = nvcc_release(root)
    missing = [part for part in WHEEL_PARTS if not (root / part.marker).is_file()]
    if missing:
        names = " and ".join(f"{part.distribution} ({part.marker})" for part in missing)
        of = f"nvcc {nvcc}" if nvcc else "nvcc"
        return (f"the CUDA toolkit from NVIDIA's wheels at {root} is incomplete: {of} needs {names}, which "
                f"{'is' if len(missing) == 1 else 'are'} not there (pip installs nvcc's parts with it, but not "
                "with --no-deps, and uninstalling one leaves the others).",
                f"Install {'it' if len(missing) == 1 else 'them'} where the build runs, of nvcc's release: pip install "
                f"{' '.join(_pin(part, nvcc, major) for part in missing)}")
    others = [(part, installed_version(root, part.distribution)) for part in WHEEL_PARTS[1:] if part.compiler]
    skewed = [(part, version) for part, version in others if nvcc and release(version) not in (None, nvcc)]
    if not skewed:
        return None
    names = " and ".join(f"{part.distribution} is {version}" for part, version in skewed)
    theirs = {release(version) for _, version in skewed}
    upgrade = (f", or bring nvcc to theirs: pip install '{NVCC_DISTRIBUTION}=={theirs.pop()}.*'"
               if len(theirs) == 1 else "")
    return (f"the CUDA toolkit from NVIDIA's wheels at {root} mixes CUDA releases: "
            f"{NVCC_DISTRIBUTION} is {installed_version(root, NVCC_DISTRIBUTION)}, but {names}. nvcc works only with "
            "the cicc and compiler headers of its own release (its requirements name no version, so pip does not "
            "keep them together); CMake's first CUDA compile would fail.",
            f"Install one release of the compiler's wheels: pip install "
            f"{' '.join(_pin(part, nvcc, major) for part, _ in skewed)}{upgrade}")
