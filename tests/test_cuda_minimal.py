"""tests/packages/cuda_minimal: a real nvcc build through buildkit, on a machine without a GPU.

Every build is for one architecture (nvcc time is what this file costs): the
project is built once for 8.0 (wheel, then develop), once more in a second folder
to compare the bytes, and rebuilt for 7.5. Nothing here needs a GPU but the one
test marked `gpu`; the fatbin is read from the `.nv_fatbin` section (and by cuobjdump
too when it is installed: see buildkit_testing.cuda.device_images).
"""

from __future__ import annotations

import functools
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from buildkit.builder.toolchain import cuda_arch
from buildkit.builder.toolchain.cuda_arch import gpu_architectures, gpu_detected, normalize_cuda_architectures
from buildkit.builder.toolchain.tools import Tool, Toolchain
from buildkit.config.invocation import Invocation
from buildkit.project import Project
from buildkit_testing.artifacts import sha256
from buildkit_testing.cuda import CUDA_MINIMAL_ARCH_VAR, cuda_build, device_images
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, setup_py
from buildkit_testing.projects import add_settings
from buildkit_testing.venvs import overlay_venv

EPOCH = "1700000000"
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


def staged(root: Path) -> Path:
    """Where a wheel build installs (the source tree stays clean)."""
    return build_folder(root) / "wheel-staging"


@functools.cache
def gpu_present() -> bool:
    return gpu_detected()  # nvidia-smi -L lists a GPU


@pytest.fixture(scope="module")
def cuda_project(tmp_path_factory, test_package):
    """tests/packages/cuda_minimal built for 8.0: a wheel, then `setup.py develop` in the same folder."""
    base = tmp_path_factory.mktemp("cuda")
    python = overlay_venv(base / "venv")
    root = test_package("cuda_minimal", base / "a" / "cuda_minimal")
    env = build_env(**{CUDA_MINIMAL_ARCH_VAR: "8.0"})
    setup_py(python, root, "bdist_wheel", "--dist-dir", base / "a" / "dist", env=env)
    wheel = next((base / "a" / "dist").glob("cuda_minimal-0.1.0-*.whl"))
    digest = sha256(staged(root) / LIBRARY)
    develop = setup_py(python, root, "develop", env=env)
    return {"python": python, "root": root, "base": base, "wheel": wheel, "library_sha256": digest,
            "develop": develop.stdout + develop.stderr}


def build_env(**extra: str) -> dict[str, str]:
    # No CFLAGS path map of our own: buildkit maps the project folder away for the
    # CMake libraries and for the `_C` stub that setuptools compiles with Python's -g.
    return clean_env(SOURCE_DATE_EPOCH=EPOCH, MAX_JOBS="2", **extra)


def probe(python: Path) -> dict:
    return json.loads(run([python, "-c", PROBE], cwd="/", env=clean_env()).stdout)


# ------------------------------------------------------------ linked libraries

def needed_libraries(path: Path) -> list[str] | None:
    readelf = shutil.which("readelf")
    if readelf is None:
        return None
    dynamic = run([readelf, "-d", path]).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]


# --------------------------------------------------------------------- tests

def test_arch_list_and_forwarded_cmake_variable_reach_cmake(test_package):
    """No nvcc needed: what buildkit hands CMake for either way of naming architectures."""
    root = test_package("cuda_minimal")
    tools = Toolchain(Tool("cmake", Path("/usr/bin/cmake"), "3.30.0"), None)

    def command(environ):
        return Project.load(root, environ=environ).driver().configure_command(tools, "Release")

    assert "-DCMAKE_CUDA_ARCHITECTURES=75-real;80" in command({CUDA_MINIMAL_ARCH_VAR: "7.5;8.0"})
    assert "-DCMAKE_CUDA_ARCHITECTURES=75-real;80" in command({"CMAKE_CUDA_ARCHITECTURES": "75-real;80"})
    # Both: the user's own -D wins over the translated list.
    both = [a for a in command({CUDA_MINIMAL_ARCH_VAR: "9.0", "CMAKE_CUDA_ARCHITECTURES": "80"}) if "CUDA_ARCH" in a]
    assert both == ["-DCMAKE_CUDA_ARCHITECTURES=80"]
    assert normalize_cuda_architectures("8.0") == "80"  # real code + PTX, CMake's plain number


def test_a_develop_build_compiles_one_architecture_of_the_wheels_list(test_package, monkeypatch) -> None:
    """No nvcc needed: with the wheel's list in [tool.buildkit], a develop build configures
    one architecture (this machine's GPU, else the newest of the list), a wheel build the
    whole list; a list in a variable, or BUILDKIT_DEVELOP_CUDA_ARCH_LIST, is built as asked."""
    root = add_settings(test_package("cuda_minimal"), 'cuda-arch-list = "7.5;8.0;9.0"')
    tools = Toolchain(Tool("cmake", Path("/usr/bin/cmake"), "3.30.0"), None)

    def architectures(environ: dict[str, str], staged: bool = False) -> str:
        project = Project.load(root, environ=environ, invocation=Invocation(("x",), staged=staged))
        (define,) = [a for a in project.driver().configure_command(tools, "Release") if "CUDA_ARCH" in a]
        return define.removeprefix("-DCMAKE_CUDA_ARCHITECTURES=")

    monkeypatch.setattr(cuda_arch, "gpu_architectures", lambda visible=None: [])
    assert architectures({}) == "90-real"  # no GPU: the newest of the list, real code only
    assert architectures({}, staged=True) == "75-real;80-real;90"
    assert architectures({CUDA_MINIMAL_ARCH_VAR: "7.5;8.0"}) == "75-real;80"  # asked for by a variable: whole
    assert architectures({"BUILDKIT_DEVELOP_CUDA_ARCH_LIST": "wheel"}) == "75-real;80-real;90"
    assert architectures({"BUILDKIT_DEVELOP_CUDA_ARCH_LIST": "8.0"}) == "80"
    monkeypatch.setattr(cuda_arch, "gpu_architectures", lambda visible=None: ["86"])
    assert architectures({}) == "86-real"  # this machine's GPU: its real code only
    assert architectures({}, staged=True) == "75-real;80-real;90"


@cuda_build
def test_a_develop_build_says_which_architecture_it_compiles(tmp_path, test_package) -> None:
    """Real nvcc: the develop build of the wheel's list 7.5;8.0;9.0 compiles one architecture
    and says which, and why; the library holds that one alone."""
    root = add_settings(test_package("cuda_minimal", tmp_path / "cuda_minimal"), 'cuda-arch-list = "7.5;8.0;9.0"')
    python = overlay_venv(tmp_path / "venv")
    built = setup_py(python, root, "develop", env=build_env())
    output = built.stdout + built.stderr
    gpus = gpu_architectures()
    one = f"{gpus[-1] if gpus else 90}-real"
    assert f"CUDA: this develop build compiles {one} only" in output and "a wheel builds 75-real;80-real;90" in output
    images = device_images(root / LIBRARY)
    assert images == [("elf", f"sm_{gpus[-1] if gpus else 90}")], images


@pytest.mark.slow
def test_cpu_only_build_with_use_cuda_off(tmp_path, test_package):
    """USE_CUDA=0 builds the C++ library alone: no nvcc needed, saxpy on the CPU."""
    root = test_package("cuda_minimal")
    python = overlay_venv(tmp_path / "venv")
    setup_py(python, root, "develop", env=clean_env(USE_CUDA="0", MAX_JOBS="2"))
    assert "nvcc" not in (build_folder(root) / "build.ninja").read_text()
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
    assert device_images(library) == [("elf", "sm_80"), ("ptx", "sm_80")]
    needed = needed_libraries(library)
    if needed is not None:  # the CUDA runtime is linked in: no libcudart.so, no libcuda.so
        assert not [name for name in needed if name.startswith(("libcudart", "libcuda."))], needed
    names = zipfile.ZipFile(cuda_project["wheel"]).namelist()
    assert {"cuda_minimal/lib/libcuda_minimal.so", "cuda_minimal/lib/libcuda_minimal_python.so",
            "cuda_minimal/include/cuda_minimal/cuda_minimal.h"} <= set(names)
    assert any(n.startswith("cuda_minimal/_C.") and n.endswith(".so") for n in names)


@cuda_build
def test_builds_in_two_folders_are_byte_identical(cuda_project, test_package):
    """The same sources under another absolute path: same library, same wheel."""
    base = cuda_project["base"]
    root = test_package("cuda_minimal", base / "b" / "cuda_minimal")
    setup_py(cuda_project["python"], root, "bdist_wheel", "--dist-dir", base / "b" / "dist",
             env=build_env(**{CUDA_MINIMAL_ARCH_VAR: "8.0"}))
    assert sha256(staged(root) / LIBRARY) == cuda_project["library_sha256"]
    python_library = Path("cuda_minimal", "lib", "libcuda_minimal_python.so")
    assert sha256(staged(root) / python_library) == sha256(staged(cuda_project["root"]) / python_library)
    wheel = next((base / "b" / "dist").glob("*.whl"))
    assert wheel.name == cuda_project["wheel"].name
    assert sha256(wheel) == sha256(cuda_project["wheel"])
    # What made it so: nvcc named its temporaries after the object, cudafe++ hashed the
    # project-relative path into the module id, and the host compiler mapped the folders.
    commands = json.loads((build_folder(root) / "compile_commands.json").read_text())
    cuda = next(c["command"] for c in commands if c["file"].endswith("saxpy_cuda.cu"))
    assert "-objtemp" in cuda
    assert "-Xcudafe=--orig_src_path_name=cuda_minimal/csrc/saxpy_cuda.cu" in cuda
    assert f"-Xcompiler=-ffile-prefix-map={root}=." in cuda
    assert str(root).encode() not in (staged(root) / LIBRARY).read_bytes()


@cuda_build
def test_changing_the_arch_list_reconfigures_and_rebuilds(cuda_project):
    python, root = cuda_project["python"], cuda_project["root"]
    result = setup_py(python, root, "develop", env=build_env(**{CUDA_MINIMAL_ARCH_VAR: "7.5"}))
    output = result.stdout + result.stderr
    assert "configuring" in output and "CUDA architectures changed: '80' → '75'" in output, output
    assert sha256(root / LIBRARY) != cuda_project["library_sha256"]
    assert device_images(root / LIBRARY) == [("elf", "sm_75"), ("ptx", "sm_75")]
    assert probe(python)["architectures"] == "75"


@cuda_build
@pytest.mark.skipif(gpu_present(), reason="`native` is refused only where there is no GPU")
def test_native_is_refused_without_a_gpu(cuda_project):
    root = cuda_project["root"]
    before = (build_folder(root) / ".buildkit" / "configure.json").read_bytes()
    result = setup_py(cuda_project["python"], root, "develop", check=False,
                      env=build_env(**{CUDA_MINIMAL_ARCH_VAR: "native"}))
    assert result.returncode != 0
    refusal = f"{CUDA_MINIMAL_ARCH_VAR}=native asks for the GPUs of this machine, but it has none"
    assert refusal in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    # Refused before anything ran: the last good configure is still on record.
    assert (build_folder(root) / ".buildkit" / "configure.json").read_bytes() == before


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
