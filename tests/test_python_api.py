"""``py-api``: scikit-build-core's ``wheel.py-api`` rules as one table (interpreters the CI
image lacks included: PyPy, free-threaded 3.13 and 3.15), and real wheels of
tests/packages/py_api: ``cp311-abi3`` with a ``.abi3.so``, the interpreter's own tag where
the request is newer than it, and a module built for one interpreter refused by name."""

from __future__ import annotations

import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from buildkit.config.options import option_keys
from buildkit.config.settings import load_settings
from buildkit.errors import ConfigError
from buildkit.frontends.cli.audit import audit
from buildkit.package.python_api import resolve
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.processes import clean_env, run, squashed, unboxed
from buildkit_testing.projects import write_pyproject
from buildkit_testing.venvs import pip_into

# (py-api, implementation, version, free-threaded) -> (python tag, abi tag, SABI version, said)
RULES = [
    (("cp311", "cpython", (3, 11), False), ("cp311", "abi3", "3.11", "")),
    (("cp37", "cpython", (3, 12), False), ("cp37", "abi3", "3.7", "")),
    (("cp312", "cpython", (3, 11), False), (None, None, "", "older than the stable ABI it asks for, 3.12")),
    (("cp311", "pypy", (3, 10), False), (None, None, "", "pypy 3.10 has no CPython stable ABI")),
    (("cp311", "cpython", (3, 13), True), (None, None, "", "has no stable ABI (abi3t comes with 3.15, PEP 803)")),
    (("cp312", "cpython", (3, 15), True), (None, None, "", "stable ABI (abi3t) starts at 3.15, not 3.12")),
    (("cp315", "cpython", (3, 15), True), ("cp315", "abi3t", "3.15", "")),
    (("cp315", "cpython", (3, 16), False), ("cp315", "abi3", "3.15", "")),
    (("py3", "cpython", (3, 11), False), ("py3", "none", "", "")),
    (("py2.py3", "pypy", (3, 10), True), ("py2.py3", "none", "", "")),
]


@pytest.mark.parametrize(("given", "expected"), RULES, ids=[f"{g[0]}-{g[1]}{g[2][1]}{'t' if g[3] else ''}"
                                                              for g, _ in RULES])
def test_the_rules(given, expected) -> None:
    requested, implementation, version, free_threaded = given
    api = resolve(requested, implementation=implementation, version=version, free_threaded=free_threaded)
    python_tag, abi_tag, sabi_version, said = expected
    assert (api.python_tag, api.abi_tag, api.sabi_version) == (python_tag, abi_tag, sabi_version)
    assert said in api.ignored_because and bool(said) == bool(api.ignored_because), api.ignored_because
    assert api.sabi_component == ("Development.SABIModule" if sabi_version else "")
    assert api.defines(skbuild=True)["SKBUILD_SABI_VERSION"] == api.defines(skbuild=False)["BUILDKIT_SABI_VERSION"]


def test_modules_outside_the_stable_abi_are_named() -> None:
    api = resolve("cp311", implementation="cpython", version=(3, 12), free_threaded=False)
    names = ["p/_a.abi3.so", "p/_b.cpython-312-x86_64-linux-gnu.so", "p/lib/libx.so", "p/_c.abi3t.so"]
    assert api.modules_outside(names) == ["p/_b.cpython-312-x86_64-linux-gnu.so", "p/_c.abi3t.so"]
    assert resolve(None, implementation="cpython", version=(3, 12), free_threaded=False).modules_outside(names) == []


@pytest.mark.parametrize("value", ["cp3", "3.11", "abi3", "cp311 ", "cpython311", "py2"])
def test_another_spelling_is_refused_by_name(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(write_pyproject(tmp_path, f'py-api = "{value}"'), option_keys())
    assert "py-api must be one of `cp3X`, `py3` or `py2.py3`" in refused.value.message


def build_wheel(project: Path, out: Path, *cmake_args: str, check: bool = True):
    return run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, project], check=check,
               env=clean_env(CMAKE_ARGS=" ".join(cmake_args)))


def set_py_api(project: Path, value: str) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('py-api = "cp311"', f'py-api = "{value}"'))


@pytest.mark.slow
def test_a_stable_abi_wheel_and_its_module(test_package, tmp_path: Path) -> None:
    project = test_package("py_api")
    build_wheel(project, tmp_path / "abi3")
    wheel = only_wheel(tmp_path / "abi3")
    assert "-cp311-abi3-" in wheel.name, wheel.name
    modules = [n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("sabitoggle/_mod")]
    assert modules == ["sabitoggle/_mod.abi3.so"], modules
    # A module built for this interpreter alone stops the wheel, by name.
    refused = build_wheel(project, tmp_path / "one", "-DONE_INTERPRETER=ON", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "Traceback" not in output, output
    said = squashed(unboxed(output))
    assert squashed("is tagged for the stable ABI (py-api = cp311), but sabitoggle/_mod.cpython-") in said, output
    assert not list((tmp_path / "one").glob("*.whl"))


@pytest.mark.slow
def test_a_py_api_newer_than_the_interpreter_gives_its_own_tag_and_says_why(test_package, tmp_path: Path) -> None:
    project = test_package("py_api")
    newer = f"cp3{sys.version_info[1] + 1}"
    set_py_api(project, newer)
    built = build_wheel(project, tmp_path / "own")
    tag = f"cp3{sys.version_info[1]}"
    wheel = only_wheel(tmp_path / "own")
    assert f"-{tag}-{tag}-" in wheel.name, wheel.name
    assert f"py-api = {newer} gives this interpreter's own wheel tag" in built.stdout + built.stderr
    assert [n for n in zipfile.ZipFile(wheel).namelist() if ".cpython-" in n]


@pytest.mark.slow
def test_python_312_builds_one_cp312_abi3_wheel_that_it_imports(venvs, wheelhouse: Path, test_package,
                                                                 tmp_path: Path) -> None:
    """py-api = "cp312" under pyenv's Python 3.12 (skipped where pyenv lacks it): one cp312-abi3
    wheel holding a .abi3.so, built by that interpreter with SKBUILD_SABI_VERSION 3.12, that
    installs and imports there."""
    python312 = venvs("3.12")
    project = test_package("py_api")
    set_py_api(project, "cp312")
    pip_into(python312, wheelhouse, "wheel", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", project)
    wheel = only_wheel(tmp_path / "dist")
    assert "-cp312-abi3-" in wheel.name, wheel.name
    assert [n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("sabitoggle/_mod")] == [
        "sabitoggle/_mod.abi3.so"]
    pip_into(python312, wheelhouse, "install", "--no-deps", wheel)
    (tmp_path / "elsewhere").mkdir()
    probe = "import sys; from sabitoggle import _mod; print(sys.version_info[:2], _mod.value(), _mod.__file__)"
    out = run([python312, "-c", probe], cwd=tmp_path / "elsewhere", env=clean_env()).stdout
    assert out.startswith("(3, 12) 1 ") and out.rstrip().endswith("_mod.abi3.so"), out


NOT_STABLE = '#include <Python.h>\nvoid *outside(void) { return PyCode_NewEmpty("f", "g", 1); }\n'


@pytest.mark.slow
def test_the_audit_runs_abi3audit_on_an_abi3_wheel(test_package, tmp_path: Path) -> None:
    """The wheel built for the stable ABI passes; the same wheel with a module that calls a
    function outside it (PyCode_NewEmpty) fails, naming it."""
    project = test_package("py_api")
    build_wheel(project, tmp_path / "abi3")
    wheel = only_wheel(tmp_path / "abi3")
    assert not [f for f in audit(wheel).findings if f.check == "abi3"]
    source = tmp_path / "outside.c"
    source.write_text(NOT_STABLE)
    module = tmp_path / "_mod.abi3.so"
    run(["cc", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", source, "-o", module])
    forged = tmp_path / "forged" / wheel.name
    forged.parent.mkdir()
    with zipfile.ZipFile(wheel) as original, zipfile.ZipFile(forged, "w") as copy:
        for info in original.infolist():
            data = module.read_bytes() if info.filename == "sabitoggle/_mod.abi3.so" else original.read(info)
            copy.writestr(info, data)
    found = [f for f in audit(forged).findings if f.check == "abi3"]
    assert [(f.file, f.reason) for f in found] == [("_mod.abi3.so", "uses PyCode_NewEmpty, outside the stable ABI its abi3 tag promises (abi3audit)")], found


@pytest.mark.slow
@pytest.mark.parity  # 3-4 minutes: two pyenv venvs and nanobind's library compiled in an isolated build
def test_nanobinds_stable_abi_wheel_built_by_312_runs_on_313(venvs, wheelhouse: Path, test_package,
                                                             tmp_path: Path) -> None:
    """nanobind_example's case: py-api = "cp312" under Python 3.12 gives one cp312-abi3 wheel
    (scikit-build-core's result), whose .abi3.so modules pass abi3audit and import on 3.13."""
    python312, python313 = venvs("3.12"), venvs("3.13")
    project = test_package("nanobind_sabi")
    pip_into(python312, wheelhouse, "wheel", "--no-deps", "-w", tmp_path / "dist", project)
    wheel = only_wheel(tmp_path / "dist")
    assert "-cp312-abi3-" in wheel.name, wheel.name
    modules = sorted(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".so"))
    assert modules == ["nbpkg/_ext.abi3.so", "nbtop.abi3.so"], modules
    assert not [f for f in audit(wheel, tools=False).findings if f.check == "tag"]
    assert not run([sys.executable, "-m", "abi3audit", "--strict", wheel], check=False).returncode
    pip_into(python313, wheelhouse, "install", "--no-deps", wheel)
    probe = "import nbtop, nbpkg; print(nbtop.greet('abi3'), nbpkg.twice(21))"
    (tmp_path / "elsewhere").mkdir()
    assert run([python313, "-c", probe], cwd=tmp_path / "elsewhere", env=clean_env()).stdout.split() == [
        "hello,", "abi3", "42"]
