"""Library-only and python-only wheels of tests/packages/minimal, installed in fresh venvs."""

from __future__ import annotations

import json
import zipfile

import pytest

from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, setup_py
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, pip_install

pytestmark = pytest.mark.slow

PROBE = "import minimal, json; print(json.dumps([minimal.sum([1, 2, 3.5]), minimal.__version__]))"


@pytest.fixture(scope="module")
def split_wheels(wheelhouse, tmp_path_factory, test_package):
    """Build libminimal, install it, then build minimal against it: one build venv."""
    root = tmp_path_factory.mktemp("split")
    project = test_package("minimal", root / "minimal")
    python = make_venv(root / "build-venv")
    pip_install(python, wheelhouse, *BUILDKIT_WITH_TOOLS, "setuptools", "wheel")
    dist = root / "dist"
    setup_py(python, project, "bdist_wheel", "-d", dist, env=clean_env(BUILD_LIBTORCH_WHL="1"))
    library = next(dist.glob("libminimal-*.whl"))
    pip_install(python, wheelhouse, library)
    setup_py(python, project, "bdist_wheel", "-d", dist, env=clean_env(BUILD_PYTHON_ONLY="1"))
    compiled = [entry["file"] for entry in json.loads((build_folder(project) / "compile_commands.json").read_text())]
    return {"library": library, "python": next(dist.glob("minimal-*.whl")), "dist": dist,
            "compiled": compiled, "project": project, "build_python": python, "root": root}


def test_library_wheel_holds_only_native_files(split_wheels):
    wheel = split_wheels["library"]
    assert "-py3-none-linux_" in wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert "libminimal/lib/libminimal.so" in names and "libminimal/include/minimal/minimal.h" in names
    assert "libminimal/share/cmake/Minimal/MinimalConfig.cmake" in names
    assert not any(n.startswith("minimal/") for n in names)
    assert not any("_python" in n or "/_C." in n for n in names)


def test_python_wheel_compiles_only_the_bindings_and_pins_the_library(split_wheels):
    assert [f.rsplit("/", 1)[-1] for f in split_wheels["compiled"]] == ["python_bindings.cpp"]
    wheel = zipfile.ZipFile(split_wheels["python"])
    names = wheel.namelist()
    assert "minimal/lib/libminimal_python.so" in names and any(n.startswith("minimal/_C.") for n in names)
    assert "minimal/lib/libminimal.so" not in names
    metadata = wheel.read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "Requires-Dist: libminimal==0.1.0" in metadata
    library_names = set(zipfile.ZipFile(split_wheels["library"]).namelist())
    shared = {n for n in names if not n.endswith((".dist-info/RECORD", ".dist-info/WHEEL"))} & library_names
    assert not shared, f"files shipped by both distributions: {shared}"


def test_both_wheels_install_and_run_together(split_wheels, wheelhouse):
    python = make_venv(split_wheels["root"] / "run-venv")
    pip_install(python, wheelhouse, "--find-links", split_wheels["dist"], "minimal")
    assert json.loads(run([python, "-c", PROBE], cwd="/").stdout) == [6.5, "0.1.0"]

    # Without the library distribution: pip's resolver refuses, --no-deps gives a named ImportError.
    run([python, "-m", "pip", "uninstall", "-y", "-q", "libminimal", "minimal"])
    refused = pip_install(python, wheelhouse, split_wheels["python"], check=False)
    assert refused.returncode != 0 and "libminimal" in refused.stdout + refused.stderr
    pip_install(python, wheelhouse, "--no-deps", split_wheels["python"])
    failed = run([python, "-c", PROBE], cwd="/", check=False)
    assert failed.returncode != 0 and "ImportError" in failed.stderr
    assert "pip install 'libminimal==0.1.0'" in failed.stderr

    # A library of another version: a clear error at import.
    other = split_wheels["root"] / "other"
    setup_py(split_wheels["build_python"], split_wheels["project"], "bdist_wheel", "-d", other,
             env=clean_env(BUILD_LIBTORCH_WHL="1", MINIMAL_BUILD_VERSION="0.2.0"))
    pip_install(python, wheelhouse, "--no-deps", next(other.glob("libminimal-0.2.0-*.whl")))
    mismatch = run([python, "-c", PROBE], cwd="/", check=False)
    assert mismatch.returncode != 0
    assert "needs libminimal==0.1.0, but libminimal 0.2.0 is installed" in mismatch.stderr


def test_python_only_build_without_the_library_is_a_clear_error(test_package, overlay_python):
    minimal_project = test_package("minimal")
    result = setup_py(overlay_python, minimal_project, "build_ext", env=clean_env(BUILD_PYTHON_ONLY="1"), check=False)
    assert result.returncode != 0 and "libminimal" in result.stderr and "Traceback" not in result.stderr
    assert "BUILD_LIBTORCH_WHL=1" in result.stderr
