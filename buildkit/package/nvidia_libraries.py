"""NVIDIA's CUDA library wheels (``nvidia-cublas``, ``nvidia-curand``...) as library dependencies.

From CUDA 13 on, every library wheel installs into the toolkit's one prefix,
``site-packages/nvidia/cu<major>/{include,lib}``, with its libraries under the loader's
name only (``libcublas.so.13``).  A ``library-dependencies`` entry naming one of them is
found like any other distribution (:mod:`buildkit.package.dependencies`); what this
module adds is what the layout and NVIDIA's libraries need:

* the CUDA major is the folder's (``cu13``): the wheels' own versions are not CUDA
  versions (``nvidia-cusparse`` 12.x and ``nvidia-curand`` 10.x are CUDA 13's), and a
  wheel of another major than the toolkit's is refused before CMake runs;
* ``CUDA_<name>_LIBRARY`` for each of its libraries, the development link in the
  build-environment mirror (``lib/libcurand.so``), so that FindCUDAToolkit's
  ``CUDA::curand`` is the wheel's library whichever toolkit compiles;
* the loader's preload list in the order NVIDIA's libraries need, as torch's
  ``_preload_cuda_deps``: what the binaries need, after what those need in the same
  folder (``libcublasLt`` before ``libcublas``, by DT_NEEDED) and the libraries they open
  at run time without naming them (``libnvJitLink`` before ``libcusparse``), so that one
  of another site folder, or a system copy the loader would find first, never stands in.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import Path

from buildkit.errors import BuildkitError
from buildkit.package.elf import read_elf_file

# nvidia/cu13/lib: the prefix every CUDA 13+ wheel installs into.
_NVIDIA_LIB_DIR = re.compile(r"^nvidia/cu(\d+)/lib$")
# libcublasLt.so.13 -> cublasLt: FindCUDAToolkit's name for it (CUDA::cublasLt, CUDA_cublasLt_LIBRARY).
_STEM = re.compile(r"^lib(.+?)\.so(?:\.\d+)*$")
# torch's _preload_cuda_deps order, the runtime first: a library comes after those it needs.
LOAD_ORDER = ("cudart", "cublasLt", "cublas", "cudnn", "nvrtc", "nvrtc-builtins", "cupti", "nvJitLink", "cufft",
              "cufftw", "curand", "cusparse", "cusparseLt", "cusolver", "cusolverMg", "nccl", "nvshmem_host",
              "cufile", "nvToolsExt")
# What a library opens at run time without naming it in DT_NEEDED (torch's workaround for
# the same: cusparse and cufft JIT-link with nvJitLink, cuDNN compiles with nvrtc).
OPENED_AT_RUN_TIME = {"cusparse": ("nvJitLink",), "cufft": ("nvJitLink",), "cusolver": ("nvJitLink",),
                      "cudnn": ("nvrtc",)}
# Left to the CUDA runtime's own loader entry (cuda-runtime), which comes first and looks in
# cuda-pathfinder's order (a copy torch loaded, the wheels, conda, the system): a library that
# needs it (libcurand) does not make it a wheel's requirement.
RUNTIME = "cudart"


def cuda_major(lib_dirs: Sequence[str]) -> int | None:
    """The CUDA major of an NVIDIA library wheel, from its ``nvidia/cu<N>/lib`` folder; None
    for any other distribution (CUDA 12's split layout, ``nvidia/cublas/lib``, included)."""
    majors = {int(m[1]) for folder in lib_dirs if (m := _NVIDIA_LIB_DIR.match(folder))}
    return majors.pop() if len(majors) == 1 else None


def library_stem(soname: str) -> str | None:
    """FindCUDAToolkit's name of a library file: ``libcublasLt.so.13`` -> ``cublasLt``."""
    match = _STEM.match(soname)
    return match[1] if match else None


def check_cuda_major(distribution: str, version: str, major: int, toolkit_major: int | None) -> None:
    """Refuse a library wheel of another CUDA major than the toolkit that compiles against it."""
    if toolkit_major is not None and major != toolkit_major:
        raise BuildkitError(
            f"{distribution} {version} is a CUDA {major} library (it installs into nvidia/cu{major}), but this build "
            f"compiles with CUDA {toolkit_major}: its headers and libraries would not match the toolkit's, and at run "
            f"time the wheel would look for it in nvidia/cu{toolkit_major}.",
            f"Install the {distribution} release for CUDA {toolkit_major} where the build runs (for an isolated "
            f"build, in [build-system] requires), or compile with a CUDA {major} toolkit.")


def cmake_library_defines(site_dir: str, lib_dir: str, libraries: Sequence[str], mirrored: Path) -> dict[str, str]:
    """``CUDA_<name>_LIBRARY`` for each library of the wheel in ``<site_dir>/<lib_dir>``: the
    unversioned name in ``mirrored``, the mirror's copy of that folder, where the mirror makes
    the development link (``libcublas.so`` -> ``libcublas.so.13``); FindCUDAToolkit takes a
    library named so as found."""
    defines = {}
    for name in libraries:
        stem = library_stem(name)
        if stem and Path(site_dir, lib_dir, name).exists():
            defines[f"CUDA_{stem}_LIBRARY"] = str(mirrored / re.sub(r"(\.so)(?:\.\d+)+$", r"\1", name))
    return defines


def preload_order(site_dirs: Sequence[str], lib_dir: str, needed: Collection[str]) -> list[str]:
    """The libraries to preload for ``needed`` (the binaries' DT_NEEDED among a wheel's libraries),
    with what each needs (its DT_NEEDED but the CUDA runtime, and what it opens at run time) first, in
    :data:`LOAD_ORDER`: file names, each looked for in ``<site>/<lib_dir>`` of ``site_dirs`` in
    turn (the wheel's own site folder first: a library it needs may be another wheel's, in
    another site folder)."""
    folders = [Path(site, lib_dir) for site in dict.fromkeys(site_dirs)]
    by_stem = {library_stem(name): name for folder in reversed(folders) for name in _loader_names(folder)}
    chosen: set[str] = set()
    pending = list(needed)
    while pending:
        name = pending.pop()
        path = next((folder / name for folder in folders if (folder / name).exists()), None)
        if name in chosen or path is None:
            continue
        chosen.add(name)
        elf = read_elf_file(path)
        pending += [*(n for n in (elf.needed if elf else ()) if library_stem(n) != RUNTIME),
                    *(by_stem[s] for s in OPENED_AT_RUN_TIME.get(library_stem(name) or "", ()) if s in by_stem)]
    rank = {stem: index for index, stem in enumerate(LOAD_ORDER)}
    return sorted(chosen, key=lambda n: (rank.get(library_stem(n) or "", len(rank)), n))


def _loader_names(folder: Path) -> list[str]:
    """The libraries of ``folder`` under their loader's name (``libX.so.N``)."""
    try:
        return [p.name for p in folder.iterdir() if re.search(r"\.so\.\d+$", p.name)]
    except OSError:
        return []
