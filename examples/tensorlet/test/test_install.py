"""The installed layout: C++ consumer through find_package(Tensorlet), the
shipped code generator, tensorlet-config, and the library loader."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from buildkit_testing.processes import run
from conftest import ROOT, have_tool, requires_build, tl, tool

pytestmark = requires_build
PKG = ROOT / "tensorlet"


def test_layout():
    assert (PKG / "lib" / "libtensorlet.so").exists() and (PKG / "lib" / "libtensorlet_python.so").exists()
    assert (PKG / "include" / "tensorlet" / "tensorlet.h").exists()
    assert (PKG / "include" / "tensorlet" / "generated" / "Functions.h").exists()
    assert (PKG / "share" / "cmake" / "Tensorlet" / "TensorletConfig.cmake").exists()
    assert (PKG / "share" / "cmake" / "Tensorlet" / "TensorletConfigVersion.cmake").exists()
    assert list(PKG.glob("_C*.so"))
    # The profiler's headers and library are installed only with USE_TLPROF=ON.
    from tensorlet import _build_config
    assert (PKG / "include" / "tensorlet" / "profiler").exists() == _build_config.profiler
    assert not (PKG / "include" / "tensorlet" / "python").exists()


def test_libtensorlet_does_not_need_cuda_or_python():
    out = run(["readelf", "-d", PKG / "lib" / "libtensorlet.so"]).stdout
    assert "cudart" not in out and "libpython" not in out


def test_codegen_ships_in_the_package(tmp_path):
    cg = PKG / "_codegen"
    assert (cg / "ops.yaml").read_text() == (ROOT / "ops.yaml").read_text()
    assert (cg / "derivatives.yaml").read_text() == (ROOT / "derivatives.yaml").read_text()
    assert not (cg / "ops.yaml").is_symlink() and (cg / "model.py").exists()
    res = subprocess.run([sys.executable, "-m", "tensorlet._codegen", "--ops", cg / "ops.yaml", "--derivatives",
                          cg / "derivatives.yaml", "--out", tmp_path], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "Functions.h").exists()


def test_tensorlet_config():
    res = subprocess.run([sys.executable, "-m", "tensorlet.config"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for needle in (f"tensorlet {tl.__version__}", "git sha:", "build type:", "CUDA:", "BLAS:", "OpenMP:"):
        assert needle in res.stdout
    assert tl.config.build_info()["version"] == tl.__version__ if hasattr(tl, "config") else True


def test_cmake_prefix_path():
    import tensorlet.utils
    assert Path(tensorlet.utils.cmake_prefix_path) == PKG / "share" / "cmake"


@pytest.mark.slow
@pytest.mark.skipif(not have_tool("cmake"), reason="cmake not available")
def test_cpp_consumer(tmp_path):
    import tensorlet.utils
    build = tmp_path / "build"
    gen = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}"] if have_tool("ninja") else []
    run([tool("cmake"), "-S", ROOT / "test" / "cpp_consumer", "-B", build, *gen,
         f"-DCMAKE_PREFIX_PATH={tensorlet.utils.cmake_prefix_path}"])
    run([tool("cmake"), "--build", build])
    out = run([build / "consumer"]).stdout
    assert out == "add: 2 3 4 5\nsum: 14\n"


def _copy_python_package(dest: Path, with_native: bool) -> Path:
    pkg = dest / "tensorlet"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("lib", "include", "share", "__pycache__", "_codegen"))
    (pkg / "lib").mkdir()
    if with_native:
        shutil.copy2(PKG / "lib" / "libtensorlet_python.so", pkg / "lib")
    return pkg


def _import(path: Path, code: str = "import tensorlet") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(path))
    return subprocess.run([sys.executable, "-c", code], cwd=path, capture_output=True, text=True, env=env)


def test_missing_library_names_the_distribution(tmp_path):
    _copy_python_package(tmp_path, with_native=False)
    res = _import(tmp_path)
    assert res.returncode != 0
    assert "ImportError" in res.stderr and "libtensorlet.so" in res.stderr
    assert f"pip install 'libtensorlet=={tl.__version__}'" in res.stderr
    assert "`buildkit develop examples/tensorlet`" in res.stderr  # the only way to build a checkout


def _library_distribution(root: Path, version: str | None) -> None:
    lib = root / "libtensorlet"
    (lib / "lib").mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    for so in ("libtensorlet.so",):
        shutil.copy2(PKG / "lib" / so, lib / "lib")
    shutil.copytree(PKG / "share", lib / "share")
    if version:
        info = root / f"libtensorlet-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: libtensorlet\nVersion: {version}\n")


def test_split_install_uses_the_library_distribution(tmp_path):
    _copy_python_package(tmp_path, with_native=True)
    _library_distribution(tmp_path, tl.__version__)
    res = _import(tmp_path, textwrap.dedent("""
        import tensorlet, tensorlet.utils
        print(tensorlet._libraries.source, tensorlet.utils.cmake_prefix_path)
        print((tensorlet.ones(3) * 2).sum().item())
    """))
    assert res.returncode == 0, res.stderr
    source, prefix = res.stdout.splitlines()[0].split()
    assert source == "libtensorlet" and Path(prefix) == tmp_path / "libtensorlet" / "share" / "cmake"
    assert res.stdout.splitlines()[1] == "6.0"


def test_version_mismatch_is_an_import_error(tmp_path):
    _copy_python_package(tmp_path, with_native=True)
    _library_distribution(tmp_path, "9.9.9")
    res = _import(tmp_path)
    assert res.returncode != 0
    assert "libtensorlet 9.9.9 is installed" in res.stderr
    assert f"pip install 'libtensorlet=={tl.__version__}'" in res.stderr


def test_another_build_of_the_same_release_is_a_mismatch_too(tmp_path):
    """The wheel pins libtensorlet to its exact version, local label included: the
    bindings were compiled against that build's headers."""
    _copy_python_package(tmp_path, with_native=True)
    other = tl.__version__.split("+")[0] + "+other.build"
    _library_distribution(tmp_path, other)
    res = _import(tmp_path)
    assert res.returncode != 0 and f"libtensorlet {other} is installed" in res.stderr


def test_cuda_is_optional_on_cpu():
    assert tl.cuda.is_available() in (True, False)
    if not (PKG / "lib" / "libtensorlet_cuda.so").exists():
        assert not tl.cuda.is_built() and not tl.cuda.is_available() and tl.cuda.device_count() == 0


def test_functional_component():
    from tensorlet import _build_config
    if not _build_config.functional:
        pytest.skip("built without BUILD_FUNCTIONAL")
    from tensorlet.functional import grad, vmap
    xs = tl.arange(6, dtype=tl.float64).view(3, 2)
    assert vmap(lambda v: (v * v).sum())(xs).tolist() == [1.0, 13.0, 41.0]
    assert vmap(lambda v, w: v * w, in_dims=(0, None))(xs, tl.tensor([1.0, 2.0], dtype=tl.float64)).shape == (3, 2)
    assert grad(lambda v: (v * v).sum())(tl.tensor([1.0, 2.0], dtype=tl.float64)).tolist() == [2.0, 4.0]
    res = subprocess.run([sys.executable, "-m", "tensorlet.functional.cli"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0 and "vmap" in res.stdout


def test_profiler_component():
    import tensorlet.profiler
    if not tensorlet.profiler.is_available():
        pytest.skip("built without USE_TLPROF")
    x = tl.ones(64, 64)
    with tensorlet.profiler.profile() as prof:
        (x @ x).relu().sum()
        x + x
    names = {e["name"]: e for e in prof.key_averages()}
    assert names["tensorlet::matmul"]["calls"] == 1 and names["tensorlet::add.Tensor"]["calls"] == 1
    assert "tensorlet::mm" not in names  # nested calls are attributed to the top-level op
    assert "calls" in prof.table()
