"""The worked examples of docs/migration/: every `after/` project builds with buildkit.

Each is copied (without build outputs), built with `python setup.py develop` in an
overlay venv and imported from a neutral folder; the claims the guides make are
checked on the way: a second develop is a no-op, a changed option reconfigures and
says why, wheels carry the libraries with relative rpaths. The `before/` files are
only shown in the guides, never built (they need torch or scikit-build-core).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from buildkit_testing.cuda import needs_nvcc
from buildkit_testing.paths import EXAMPLES, build_folder
from buildkit_testing.processes import clean_env, run, setup_py
from buildkit_testing.projects import copy_sources
from buildkit_testing.venvs import overlay_venv

pytestmark = pytest.mark.slow

MIGRATION = EXAMPLES / "migration"


def copy_after(example: str, package: str, target: Path) -> Path:
    """A private copy of ``examples/migration/<example>/after`` without what a build left there."""
    return copy_sources(MIGRATION / example / "after", target, package)


def develop(python: Path, project: Path, **env: str) -> str:
    result = setup_py(python, project, "develop", env=clean_env(**env))
    return result.stdout + result.stderr


def probe(python: Path, code: str, cwd: Path):
    cwd.mkdir(exist_ok=True)
    return json.loads(run([python, "-c", f"import json\n{code}"], cwd=cwd).stdout)


def rpath(library: Path) -> str:
    out = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
    return next((line.split("[", 1)[1].rstrip("]") for line in out.splitlines()
                 if "(RUNPATH)" in line or "(RPATH)" in line), "")


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf is needed to read rpaths")
def test_from_setup_py(tmp_path):
    for name in ("setup.py", "CMakeLists.txt"):
        assert (MIGRATION / "from-setup-py" / "before" / name).is_file()
    project = copy_after("from-setup-py", "fastvec", tmp_path / "fastvec")
    python = overlay_venv(tmp_path / "venv")
    first = develop(python, project)
    assert "configuring" in first and "no CMakeCache.txt" in first
    norm, location = probe(python, "import fastvec; print(json.dumps([fastvec.norm([3, 4]), fastvec.__file__]))",
                           tmp_path / "elsewhere")
    assert norm == 5.0 and Path(location).is_relative_to(project)
    assert "up to date" in develop(python, project)

    # The wheel: package_data from the rules (after the build, not before it), relative rpaths.
    setup_py(python, project, "bdist_wheel", "-d", tmp_path / "dist")
    wheel = next((tmp_path / "dist").glob("fastvec-0.1.0-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("fastvec/lib/libfastvec.so", "fastvec/lib/libfastvec_python.so",
                     "fastvec/include/fastvec/fastvec.h", "fastvec/version.py"):
        assert expected in names
    stub = next(p for p in (project / "fastvec").glob("_C.*.so"))
    assert rpath(stub) == "$ORIGIN/lib"
    assert rpath(project / "fastvec" / "lib" / "libfastvec_python.so") == "$ORIGIN"


def test_from_scikit_build_core(tmp_path):
    before = (MIGRATION / "from-scikit-build-core" / "before" / "pyproject.toml").read_text()
    assert 'build-backend = "scikit_build_core.build"' in before
    project = copy_after("from-scikit-build-core", "skstats", tmp_path / "skstats")
    python = overlay_venv(tmp_path / "venv")
    develop(python, project)
    code = "import skstats as s; print(json.dumps([s.mean([1, 2, 3]), s.variance([1, 2, 3, 4]), s.variant()]))"
    assert probe(python, code, tmp_path / "elsewhere") == [2.0, 1.25, "one-pass"]
    assert "up to date" in develop(python, project)
    # A forwarded option (cmake-forward) reconfigures, says why, and rebuilds.
    changed = develop(python, project, SKSTATS_FAST="0")
    assert "configuring" in changed and "SKSTATS_FAST" in changed
    assert probe(python, code, tmp_path / "elsewhere") == [2.0, 1.25, "two-pass"]

    # The CMake-built module ships in the wheel (cmake-extensions).
    setup_py(python, project, "bdist_wheel", "-d", tmp_path / "dist")
    names = zipfile.ZipFile(next((tmp_path / "dist").glob("skstats-0.1.0-*.whl"))).namelist()
    assert any(n.startswith("skstats/_core.") and n.endswith(".so") for n in names)


@pytest.mark.cuda
@needs_nvcc
def test_from_cpp_extension(tmp_path):
    assert "CUDAExtension" in (MIGRATION / "from-cpp-extension" / "before" / "setup.py").read_text()
    project = copy_after("from-cpp-extension", "cuext", tmp_path / "cuext")
    python = overlay_venv(tmp_path / "venv")
    develop(python, project, CUEXT_CUDA_ARCH_LIST="8.0")  # one architecture: the test's nvcc time
    cache = (build_folder(project) / "CMakeCache.txt").read_text()
    assert re.search(r"^CMAKE_CUDA_ARCHITECTURES:\w+=80$", cache, re.M)
    code = """\
import cuext
try:
    result = cuext.scale_add([1, 2], [3, 4], 0.5)
except RuntimeError as error:  # no usable GPU: CUDA's own message
    result = str(error)
print(json.dumps([cuext.architectures(), result]))"""
    architectures, result = probe(python, code, tmp_path / "elsewhere")
    assert architectures == "80"
    assert result == [2.5, 4.0] or result.startswith("CUDA error in ")
    # Importing needed no libcudart.so: the runtime is linked statically.
    needed = subprocess.run(["ldd", str(project / "cuext" / "lib" / "libcuext.so")], capture_output=True,
                            text=True).stdout
    assert "libcudart.so" not in needed
    assert "up to date" in develop(python, project, CUEXT_CUDA_ARCH_LIST="8.0")
