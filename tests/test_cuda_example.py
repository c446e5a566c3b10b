"""examples/cuda_minimal: a real nvcc build through buildkit, on a machine without a GPU.

Every build is for one architecture (nvcc time is what this file costs): the
project is built once for 8.0 (wheel, then develop), once more in a second folder
to compare the bytes, and rebuilt for 7.5. Nothing here needs a GPU but the one
test marked `gpu`; the fatbin is read by cuobjdump when it is installed, else by a
small reader of the `.nv_fatbin` section below.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import struct
import zipfile
from pathlib import Path

import pytest
from buildkit_testing import clean_env, copy_example, overlay_venv, run

from buildkit.builder.cuda_arch import gpu_detected, normalize_cuda_architectures

NVCC = os.environ.get("CUDACXX") or shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH (nor CUDACXX set): "
                                                     "the CUDA example needs the CUDA toolkit's compiler")


def cuda_build(test):
    """slow + cuda + skipped without nvcc: every test that compiles the example."""
    return pytest.mark.slow(pytest.mark.cuda(needs_nvcc(test)))


EPOCH = "1700000000"
ARCH_VAR = "CUDA_MINIMAL_CUDA_ARCH_LIST"
LIBRARY = Path("cuda_minimal", "lib", "libcuda_minimal.so")

PROBE = """\
import json, cuda_minimal as c
from cuda_minimal import _C
out = {"file": c.__file__, "available": c.cuda_available(), "status": c.cuda_status(),
       "built_with_cuda": c.built_with_cuda(), "architectures": c.compiled_architectures(),
       "saxpy": c.saxpy(2.0, [1, 2, 3], [10, 20, 30]), "backend": _C.saxpy(2.0, [1], [1])[1]}
for device in ("cpu", "cuda", "gpu"):
    try:
        out[device] = c.saxpy(0.5, [2, 4], [1, 1], device=device)
    except (RuntimeError, ValueError) as exc:
        out[device] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


@functools.cache
def gpu_present() -> bool:
    return gpu_detected()  # nvidia-smi -L lists a GPU


@pytest.fixture(scope="module")
def cuda_project(tmp_path_factory):
    """examples/cuda_minimal built for 8.0: a wheel, then `setup.py develop` in the same folder."""
    base = tmp_path_factory.mktemp("cuda")
    python = overlay_venv(base / "venv")
    root = copy_example("cuda_minimal", base / "a" / "cuda_minimal")
    env = build_env(**{ARCH_VAR: "8.0"})
    run([python, "setup.py", "bdist_wheel", "--dist-dir", base / "a" / "dist"], cwd=root, env=env)
    wheel = next((base / "a" / "dist").glob("cuda_minimal-0.1.0-*.whl"))
    digest = sha256(root / LIBRARY)
    develop = run([python, "setup.py", "develop"], cwd=root, env=env)
    return {"python": python, "root": root, "base": base, "wheel": wheel, "library_sha256": digest,
            "develop": develop.stdout + develop.stderr}


def build_env(**extra: str) -> dict[str, str]:
    # No CFLAGS path map of our own: buildkit maps the project folder away for the
    # CMake libraries and for the `_C` stub that setuptools compiles with Python's -g.
    return clean_env(SOURCE_DATE_EPOCH=EPOCH, MAX_JOBS="2", **extra)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def probe(python: Path) -> dict:
    return json.loads(run([python, "-c", PROBE], cwd="/", env=clean_env()).stdout)


# ------------------------------------------------------------ fatbin reading

def fatbin_images(library: Path) -> list[tuple[str, str]]:
    """(kind, sm_XX) of every image in the library's fatbin: cuobjdump's answer when it is
    installed (the two readers must agree), else the section reader's."""
    images = read_fatbin(library)
    cuobjdump = shutil.which("cuobjdump")
    if cuobjdump:
        listing = run([cuobjdump, "--list-elf", "--list-ptx", library]).stdout
        listed = sorted((line.split()[0].lower(), line.rsplit(".", 2)[-2]) for line in listing.splitlines()
                        if line.startswith(("ELF file", "PTX file")))
        assert listed == images, listing
    return images


def read_fatbin(library: Path) -> list[tuple[str, str]]:
    """The images named by the `.nv_fatbin` section: a fatbin header (magic 0xBA55ED50,
    header size, size) then entries (kind 1 PTX / 2 ELF, header size, payload size,
    the architecture at offset 0x1C)."""
    blob = elf_section(library, ".nv_fatbin")
    images, pos = [], 0
    while pos + 16 <= len(blob):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != 0xBA55ED50:
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


def needed_libraries(path: Path) -> list[str] | None:
    readelf = shutil.which("readelf")
    if readelf is None:
        return None
    dynamic = run([readelf, "-d", path]).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]


# --------------------------------------------------------------------- tests

def test_arch_list_and_forwarded_cmake_variable_reach_cmake(tmp_path):
    """No nvcc needed: what buildkit hands CMake for either way of naming architectures."""
    from buildkit.builder.toolchain import Tool, Toolchain
    from buildkit.project import Project

    root = copy_example("cuda_minimal", tmp_path / "cuda_minimal")
    tools = Toolchain(Tool("cmake", Path("/usr/bin/cmake"), "3.30.0"), None)

    def command(environ):
        return Project.load(root, environ=environ).driver().configure_command(tools, "Release")

    assert "-DCMAKE_CUDA_ARCHITECTURES=75-real;80" in command({ARCH_VAR: "7.5;8.0"})
    assert "-DCMAKE_CUDA_ARCHITECTURES=75-real;80" in command({"CMAKE_CUDA_ARCHITECTURES": "75-real;80"})
    # Both: the user's own -D wins over the translated list.
    both = [a for a in command({ARCH_VAR: "9.0", "CMAKE_CUDA_ARCHITECTURES": "80"}) if "CUDA_ARCH" in a]
    assert both == ["-DCMAKE_CUDA_ARCHITECTURES=80"]
    assert normalize_cuda_architectures("8.0") == "80"  # real code + PTX, CMake's plain number


@pytest.mark.slow
def test_cpu_only_build_with_use_cuda_off(tmp_path):
    """USE_CUDA=0 builds the C++ library alone: no nvcc needed, saxpy on the CPU."""
    root = copy_example("cuda_minimal", tmp_path / "cuda_minimal")
    python = overlay_venv(tmp_path / "venv")
    run([python, "setup.py", "develop"], cwd=root, env=clean_env(USE_CUDA="0", MAX_JOBS="2"))
    assert "nvcc" not in (root / "build" / "build.ninja").read_text()
    info = probe(python)
    assert (info["built_with_cuda"], info["available"], info["architectures"]) == (False, False, "")
    assert info["saxpy"] == [12.0, 24.0, 36.0] and info["backend"] == "cpu"
    assert info["cuda"] == "RuntimeError: cuda_minimal was built without CUDA (USE_CUDA=OFF or no nvcc)"


@cuda_build
@pytest.mark.skipif(gpu_present(), reason="checks the no-GPU behaviour; this machine has a GPU")
def test_import_without_gpu_falls_back_to_cpu(cuda_project):
    assert "registered editable install" in cuda_project["develop"]
    assert "configuring" not in cuda_project["develop"]  # the wheel's build folder was reused
    info = probe(cuda_project["python"])
    assert Path(info["file"]).is_relative_to(cuda_project["root"])
    assert info["built_with_cuda"] is True
    assert info["available"] is False
    assert info["status"] != "ok", info["status"]  # e.g. "cudaErrorInsufficientDriver: ..."
    assert info["backend"] == "cpu"
    assert info["saxpy"] == [12.0, 24.0, 36.0]
    assert info["cpu"] == [2.0, 3.0]
    # Asking for the GPU turns the CUDA error into an exception that names the call.
    assert info["cuda"].startswith("RuntimeError: CUDA error in cudaMalloc"), info["cuda"]
    assert info["gpu"].startswith("ValueError: saxpy: device must be"), info["gpu"]


@cuda_build
def test_library_is_built_for_the_requested_architecture(cuda_project):
    assert probe(cuda_project["python"])["architectures"] == normalize_cuda_architectures("8.0") == "80"
    library = cuda_project["root"] / LIBRARY
    assert fatbin_images(library) == [("elf", "sm_80"), ("ptx", "sm_80")]
    needed = needed_libraries(library)
    if needed is not None:  # the CUDA runtime is linked in: no libcudart.so, no libcuda.so
        assert not [name for name in needed if name.startswith(("libcudart", "libcuda."))], needed
    names = zipfile.ZipFile(cuda_project["wheel"]).namelist()
    assert {"cuda_minimal/lib/libcuda_minimal.so", "cuda_minimal/lib/libcuda_minimal_python.so",
            "cuda_minimal/include/cuda_minimal/cuda_minimal.h"} <= set(names)
    assert any(n.startswith("cuda_minimal/_C.") and n.endswith(".so") for n in names)


@cuda_build
def test_builds_in_two_folders_are_byte_identical(cuda_project):
    """The same sources under another absolute path: same library, same wheel."""
    base = cuda_project["base"]
    root = copy_example("cuda_minimal", base / "b" / "cuda_minimal")
    run([cuda_project["python"], "setup.py", "bdist_wheel", "--dist-dir", base / "b" / "dist"],
        cwd=root, env=build_env(**{ARCH_VAR: "8.0"}))
    assert sha256(root / LIBRARY) == cuda_project["library_sha256"]
    assert sha256(root / "cuda_minimal" / "lib" / "libcuda_minimal_python.so") == \
        sha256(cuda_project["root"] / "cuda_minimal" / "lib" / "libcuda_minimal_python.so")
    wheel = next((base / "b" / "dist").glob("*.whl"))
    assert wheel.name == cuda_project["wheel"].name
    assert sha256(wheel) == sha256(cuda_project["wheel"])
    # What made it so: nvcc named its temporaries after the object, cudafe++ hashed the
    # project-relative path into the module id, and the host compiler mapped the folders.
    commands = json.loads((root / "build" / "compile_commands.json").read_text())
    cuda = next(c["command"] for c in commands if c["file"].endswith("saxpy_cuda.cu"))
    assert "-objtemp" in cuda
    assert "-Xcudafe=--orig_src_path_name=cuda_minimal/csrc/saxpy_cuda.cu" in cuda
    assert f"-Xcompiler=-ffile-prefix-map={root}=." in cuda
    assert str(root).encode() not in (root / LIBRARY).read_bytes()


@cuda_build
def test_changing_the_arch_list_reconfigures_and_rebuilds(cuda_project):
    python, root = cuda_project["python"], cuda_project["root"]
    result = run([python, "setup.py", "develop"], cwd=root, env=build_env(**{ARCH_VAR: "7.5"}))
    output = result.stdout + result.stderr
    assert "configuring" in output and "CUDA architectures changed: '80' → '75'" in output, output
    assert sha256(root / LIBRARY) != cuda_project["library_sha256"]
    assert fatbin_images(root / LIBRARY) == [("elf", "sm_75"), ("ptx", "sm_75")]
    assert probe(python)["architectures"] == "75"


@cuda_build
@pytest.mark.skipif(gpu_present(), reason="`native` is refused only where there is no GPU")
def test_native_is_refused_without_a_gpu(cuda_project):
    root = cuda_project["root"]
    before = (root / "build" / ".buildkit" / "configure.json").read_bytes()
    result = run([cuda_project["python"], "setup.py", "develop"], cwd=root, check=False,
                 env=build_env(**{ARCH_VAR: "native"}))
    assert result.returncode != 0
    assert f"{ARCH_VAR}=native asks for the GPUs of this machine, but it has none" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    # Refused before anything ran: the last good configure is still on record.
    assert (root / "build" / ".buildkit" / "configure.json").read_bytes() == before


@cuda_build
@pytest.mark.gpu
@pytest.mark.skipif(not gpu_present(), reason="no CUDA device (`nvidia-smi -L` lists none)")
def test_saxpy_runs_on_the_gpu(cuda_project):
    check = ("import cuda_minimal as c; from cuda_minimal import _C; import json; "
             "n = 100000; x = [float(i % 7) for i in range(n)]; y = [1.0] * n; "
             "r, backend = _C.saxpy(3.0, x, y, 'cuda'); "
             "print(json.dumps([c.cuda_available(), c.cuda_status(), backend, "
             "r == [3.0 * v + 1.0 for v in x]]))")
    available, status, backend, correct = json.loads(
        run([cuda_project["python"], "-c", check], cwd="/", env=clean_env()).stdout)
    assert available and status == "ok" and backend == "cuda" and correct
