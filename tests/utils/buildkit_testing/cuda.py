"""CUDA in the tests: where nvcc and cuobjdump are, the marks of a test that compiles
CUDA code, and the device images a library embeds."""

from __future__ import annotations

import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from buildkit.builder.toolchain.cuda_toolkit import toolkit_requirements
from buildkit_testing.processes import run
from buildkit_testing.venvs import WHEEL_CACHE, venv_env

# tests/packages/cuda_minimal's architecture list (its env-prefix is CUDA_MINIMAL).
CUDA_MINIMAL_ARCH_VAR = "CUDA_MINIMAL_CUDA_ARCH_LIST"
FATBIN_MAGIC = 0xBA55ED50


def find_nvcc() -> str | None:
    """nvcc where buildkit's toolchain looks for it (CUDACXX, PATH, /usr/local/cuda/bin); None when absent."""
    for candidate in (os.environ.get("CUDACXX"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def toolkit_roots() -> list[Path]:
    """Where the CUDA toolkit's root may be: above nvcc (resolved: nvcc may be a link or a
    wrapper outside it), /usr/local/cuda."""
    nvcc = find_nvcc()
    return [*([Path(nvcc).resolve().parent.parent] if nvcc else []), Path("/usr/local/cuda")]


def find_toolkit_root() -> Path | None:
    """The CUDA toolkit's root (CUDA_HOME, what torch's FindCUDA wants): the first of
    :func:`toolkit_roots` with headers; None when none has them."""
    return next((root for root in toolkit_roots() if (root / "include" / "cuda_runtime.h").is_file()), None)


def cuda_toolkit_root() -> Path:
    """:func:`find_toolkit_root`; the test skips without a toolkit that has headers."""
    toolkit = find_toolkit_root()
    if toolkit is None:
        pytest.skip(f"no CUDA toolkit with headers in {toolkit_roots()}")
    return toolkit


def device_link_lto(toolkit: Path, folder: Path) -> bool:
    """Whether the toolkit's nvcc links device code with link-time optimization (-dlink -dlto),
    as cpp_extension asks for every ``dlink=True`` extension (a toolkit without its NVVM
    library where nvlink looks cannot); ``folder`` is made for the probe's files."""
    folder.mkdir(parents=True)
    (folder / "a.cu").write_text("__device__ int twice(int x) { return 2 * x; }\n")
    nvcc = toolkit / "bin" / "nvcc"
    compiled = run([nvcc, "-arch=sm_75", "-dc", "-dlto", "a.cu", "-o", "a.o"], cwd=folder, check=False)
    linked = run([nvcc, "-arch=sm_75", "-dlink", "-dlto", "a.o", "-o", "link.o"], cwd=folder, check=False)
    return compiled.returncode == 0 and linked.returncode == 0


def nvcc_release(nvcc: str | Path) -> str | None:
    """nvcc's CUDA release ("13.0"); None when it does not say."""
    found = re.search(r"release (\d+\.\d+)", run([nvcc, "--version"], check=False).stdout)
    return found[1] if found else None


needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not found (CUDACXX, PATH, /usr/local/cuda/bin): "
                                                            "the test compiles CUDA code")


# The marks of a test that compiles CUDA code: slow, cuda, skipped without nvcc.
CUDA_BUILD_MARKS = (pytest.mark.slow, pytest.mark.cuda, needs_nvcc)


def cuda_build(test):
    """Marks a test that compiles CUDA code with CUDA_BUILD_MARKS."""
    for mark in CUDA_BUILD_MARKS:
        test = mark(test)
    return test


def find_cuobjdump() -> str | None:
    """cuobjdump from PATH, the venv (pip's nvidia-cuda-cuobjdump) or beside nvcc; None when absent."""
    candidates = [shutil.which("cuobjdump"), Path(sys.executable).parent / "cuobjdump"]
    if nvcc := find_nvcc():
        candidates += [Path(nvcc).resolve().parent / "cuobjdump", Path("/usr/local/cuda/bin/cuobjdump")]
    return next((str(c) for c in candidates if c and Path(c).exists()), None)


def device_images(library: Path) -> list[tuple[str, str]]:
    """(kind, sm_XX) of every device image in the library's ``.nv_fatbin`` section, sorted,
    e.g. [("elf", "sm_80"), ("ptx", "sm_80")]; each translation unit brings its own.
    When cuobjdump is installed it must list the same."""
    images = read_fatbin(library)
    if cuobjdump := find_cuobjdump():
        listing = run([cuobjdump, "--list-elf", "--list-ptx", library]).stdout
        listed = sorted((line.split()[0].lower(), line.rsplit(".", 2)[-2]) for line in listing.splitlines()
                        if line.startswith(("ELF file", "PTX file")))
        assert listed == images, listing
    return images


def read_fatbin(library: Path) -> list[tuple[str, str]]:
    """The images the ``.nv_fatbin`` section names: 8-byte aligned containers (magic
    0xBA55ED50, header size, size) of entries (kind 1 PTX / 2 ELF, header size,
    payload size, the architecture at offset 0x1C)."""
    blob = elf_section(library, ".nv_fatbin")
    images, pos = [], 0
    while pos + 16 <= len(blob):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8
            continue
        entry, end = pos + header_size, pos + header_size + fat_size
        while entry + 0x20 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
            (arch,) = struct.unpack_from("<I", blob, entry + 0x1C)
            images.append(({1: "ptx", 2: "elf"}.get(kind, str(kind)), f"sm_{arch}"))
            entry += entry_header + payload
        pos = (end + 7) // 8 * 8
    return sorted(images)


def elf_section(path: Path, name: str) -> bytes:
    """The bytes of section ``name`` of a 64-bit little-endian ELF file; empty when it has none."""
    data = path.read_bytes()
    assert data[:6] == b"\x7fELF\x02\x01", "a 64-bit little-endian ELF file"
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    for sh_name, _type, _flags, _addr, offset, size in headers:
        start = names + sh_name
        if data[start:data.index(b"\0", start)].decode() == name:
            return data[offset:offset + size]
    return b""


# ----------------------------------------------- a CUDA toolkit from NVIDIA's wheels

# NVIDIA's toolchain wheels of one CUDA major, as buildkit pins them for an isolated build (~130 MB):
# downloaded once into the persistent wheel cache (not the run's wheelhouse, which every session
# copies), and given to the builds that use them as a second find-links folder.
CUDA_TOOLCHAIN_CACHE = WHEEL_CACHE / "cuda-toolchain"
# The library wheel tests/packages/cuda_from_wheels links (library-dependencies): NVIDIA's
# smallest (~60 MB; nvidia-cublas is 440 MB).
CUDA_LIBRARY_WHEELS = ("nvidia-curand>=10,<11",)


def cuda_toolchain_wheels(*more: str) -> Path:
    """The folder of NVIDIA's toolchain wheels (nvidia-cuda-nvcc, -nvvm, -crt, -runtime, -cccl),
    of the library wheels the tests link (:data:`CUDA_LIBRARY_WHEELS`) and of the ``more``
    requirements (downloaded without their dependencies: name those too); a requirement is
    downloaded unless a wheel there satisfies it (several releases of one wheel may be kept)."""
    requirements = [*toolkit_requirements(None), *CUDA_LIBRARY_WHEELS, *more]
    have = [parse_wheel_filename(wheel.name)[:2] for wheel in CUDA_TOOLCHAIN_CACHE.glob("*.whl")]
    missing = [text for text in requirements if not any(
        name == canonicalize_name((wanted := Requirement(text)).name) and wanted.specifier.contains(version, True)
        for name, version in have)]
    if missing:
        CUDA_TOOLCHAIN_CACHE.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--no-deps", "-d",
             CUDA_TOOLCHAIN_CACHE, *missing])
    return CUDA_TOOLCHAIN_CACHE


def fake_cuda_toolkit(root: Path, version: int) -> Path:
    """A CUDA toolkit's files as NVIDIA's wheels (``<site>/nvidia/cu13``) or a system installation
    lay them out, for ``CUDA_VERSION`` ``version`` (13050 is 13.5): an nvcc that answers
    ``--version`` only, ``include/cuda.h`` and the headers that say each wheel is there
    (``crt/host_config.h``, ``cuda_runtime.h``), the runtime with its versioned name only."""
    release = f"{version // 1000}.{version % 1000 // 10}"
    for program, text in (("bin/nvcc", f"echo 'Cuda compilation tools, release {release}, V{release}.1'"),
                          ("bin/ptxas", "exit 1"), ("nvvm/bin/cicc", "exit 1")):
        (root / program).parent.mkdir(parents=True, exist_ok=True)
        (root / program).write_text(f"#!/bin/sh\n{text}\n")
        (root / program).chmod(0o755)
    (root / "bin" / "nvcc.profile").write_text("TOP = $(_HERE_)/..\n")
    (root / "include").mkdir(exist_ok=True)
    (root / "include" / "cuda.h").write_text(f"#pragma once\n#define CUDA_VERSION {version}\n")
    (root / "include" / "cuda_runtime.h").write_text("#pragma once\n")
    (root / "include" / "crt").mkdir(exist_ok=True)
    (root / "include" / "crt" / "host_config.h").write_text("#pragma once\n")
    (root / "lib").mkdir(exist_ok=True)
    (root / "lib" / f"libcudart.so.{version // 1000}").write_bytes(b"\x7fELF")
    (root / "lib" / "libcudart_static.a").write_bytes(b"!<arch>\n")
    return root


def record_wheels(site: Path, versions: dict[str, str]) -> None:
    """The dist-info pip writes for each distribution of ``versions`` (name: version) in ``site``."""
    for name, version in versions.items():
        info = site / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


# distribution, version, its libraries (file name, what it needs): NVIDIA's, as CUDA 13 ships them.
NVIDIA_LIBRARY_WHEELS = {
    "nvidia-cublas": ("13.10.0.20", [("libcublasLt.so.13", []), ("libcublas.so.13", ["libcublasLt.so.13"])]),
    "nvidia-cusparse": ("12.6.3.3", [("libcusparse.so.12", [])]),  # opens libnvJitLink without naming it
    "nvidia-nvjitlink": ("13.4.92", [("libnvJitLink.so.13", [])]),
    "nvidia-curand": ("10.4.0.35", [("libcurand.so.10", ["libcudart.so.13"])]),  # install the runtime first
    "nvidia-cuda-runtime": ("13.0.96", [("libcudart.so.13", [])]),
}


def fake_nvidia_library_wheel(site: Path, distribution: str) -> None:
    """A stand-in for NVIDIA's library wheel ``distribution`` (a key of NVIDIA_LIBRARY_WHEELS):
    its libraries (real ELF files, each with its SONAME and DT_NEEDED) in
    ``site/nvidia/cu13/lib``, a header, and the dist-info pip writes."""
    version, libraries = NVIDIA_LIBRARY_WHEELS[distribution]
    lib = site / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    (site / "nvidia" / "cu13" / "include").mkdir(exist_ok=True)
    header = f"nvidia/cu13/include/{distribution.split('-')[1]}.h"
    (site / header).write_text("#pragma once\n")
    files = [header]
    with tempfile.TemporaryDirectory() as stubs:  # what it needs, when no wheel of it is there to link
        for name, needs in libraries:
            for need in needs:
                _shared_library(Path(stubs) / need, [])
            _shared_library(lib / name, needs, Path(stubs))
            files.append(f"nvidia/cu13/lib/{name}")
    info = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n")
    (info / "top_level.txt").write_text("nvidia\n")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in [*files, f"{info.name}/METADATA"]))


def _shared_library(path: Path, needs: list[str], stubs: Path | None = None) -> None:
    """A small shared library at ``path`` with its file name as SONAME, needing ``needs``
    (found beside it, else in ``stubs``)."""
    source = path.parent / f"{path.name}.c"
    source.write_text(f"int {path.name.split('.')[0]}_version(void) {{ return 1; }}\n")
    folders = [f"-L{folder}" for folder in (path.parent, stubs) if folder]
    subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{path.name}", "-o", path, source, *folders,
                    "-Wl,--no-as-needed", *(f"-l:{n}" for n in needs)], check=True)
    source.unlink()


def system_cuda_paths() -> tuple[list[str], list[str]]:
    """The folders and files through which a build finds the machine's CUDA toolkit without
    PATH or CUDA_HOME: /usr/local/cuda* (CMake's default), an nvcc wrapper in a CMake prefix
    (/usr/local/bin/nvcc on the CI image), and /etc/ld.so.conf.d (the loader's libcudart)."""
    folders = [p for p in sorted(glob.glob("/usr/local/cuda*")) if os.path.isdir(p) and not os.path.islink(p)]
    folders += [p for p in ("/etc/ld.so.conf.d",) if os.path.isdir(p)]
    files = [p for p in ("/usr/local/bin/nvcc", "/usr/local/bin/__nvcc_device_query", "/usr/bin/nvcc")
             if os.path.isfile(p)]
    return folders, files


def without_system_cuda(argv: list[str | Path]) -> list[str]:
    """``argv`` run under bubblewrap with empty folders and files over the system toolkit's."""
    folders, files = system_cuda_paths()
    hide = [arg for folder in folders for arg in ("--tmpfs", folder)]
    hide += [arg for file in files for arg in ("--ro-bind", "/dev/null", file)]
    return ["bwrap", "--dev-bind", "/", "/", *hide, *map(str, argv)]


def bubblewrap_unavailable() -> str | None:
    """Why a command cannot run under bubblewrap here (not installed, no user namespaces and not
    root); None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`"
    probe = subprocess.run(without_system_cuda(["true"]), capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"bwrap cannot run here (no user namespaces and not root?): {probe.stderr.strip()}"
    return None


def without_system_cuda_env(python: Path, wheelhouse: Path, **overrides: str) -> dict[str, str]:
    """The environment of the venv of ``python`` with no way to the system toolkit: its bin and
    the system's own folders on PATH, no CUDA variable, pip limited to the wheelhouse and
    NVIDIA's toolchain wheels (run the command with :func:`without_system_cuda`)."""
    env = {**venv_env(python, wheelhouse, **overrides), "PATH": f"{python.parent}{os.pathsep}/usr/bin{os.pathsep}/bin",
           "PIP_FIND_LINKS": f"{wheelhouse} {cuda_toolchain_wheels()}"}
    for name in ("CUDA_HOME", "CUDA_PATH", "CUDACXX", "TORCH_CUDA_ARCH_LIST"):
        env.pop(name, None)
    return env
