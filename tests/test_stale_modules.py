"""No stale code is imported or shipped (tests/packages/stable_abi_toggle).

* A develop never leaves a file that shadows the module it just built, in the running
  interpreter's import order (``.cpython-3XY-...so``, then ``.abi3.so``, then ``.so``):
  Python 3.12 with a module rebuilt for the stable ABI used to keep importing the
  ``.cpython-312-...so`` setuptools' in-place ``build_ext`` had copied beside it.
* Developing under 3.11 and 3.12 by turns in one checkout runs each one's fresh build.
* A wheel holds no extension module for another interpreter than its tag's.
* A compiled program installed to the scripts folder ships as its very bytes.

The rows that need another interpreter skip, saying which, where pyenv has none.
"""

from __future__ import annotations

import importlib.machinery
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit.builder.install import shadows as module_shadows
from buildkit.builder.install.manifest import INSTALL_MANIFEST
from buildkit.builder.install.shadows import remove_shadowing_modules
from buildkit.errors import BuildkitError
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import run, squashed, unboxed
from buildkit_testing.venvs import pip_into, venv_env

SUFFIXES = importlib.machinery.EXTENSION_SUFFIXES  # this interpreter's import order


# --------------------------------------------------------------- the shadow check alone
def _tree(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "pkg"
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(b"\x7fELF")
    return folder


def test_a_shadow_an_earlier_install_wrote_is_removed(tmp_path):
    folder = _tree(tmp_path, f"_mod{SUFFIXES[0]}", "_mod.abi3.so")
    (tmp_path / INSTALL_MANIFEST).write_text(f"{folder / ('_mod' + SUFFIXES[0])}\n")
    removed = remove_shadowing_modules([str(folder / "_mod.abi3.so")], tmp_path)
    assert removed == [str(folder / f"_mod{SUFFIXES[0]}")]
    assert sorted(p.name for p in folder.iterdir()) == ["_mod.abi3.so"]


def test_a_shadow_buildkit_did_not_write_is_refused_by_name(tmp_path):
    folder = _tree(tmp_path, f"_mod{SUFFIXES[0]}", "_mod.abi3.so")
    with pytest.raises(BuildkitError) as caught:
        remove_shadowing_modules([str(folder / "_mod.abi3.so")], tmp_path)
    assert str(folder / f"_mod{SUFFIXES[0]}") in caught.value.message and "Delete" in caught.value.hint
    assert (folder / f"_mod{SUFFIXES[0]}").exists()


def test_another_interpreters_module_and_a_later_suffix_stay(tmp_path):
    other = "_mod.cpython-39-x86_64-linux-gnu.so"  # never this interpreter's
    folder = _tree(tmp_path, other, "_mod.so")
    assert remove_shadowing_modules([str(folder / f"_mod{SUFFIXES[0]}")], tmp_path) == []
    assert sorted(p.name for p in folder.iterdir()) == [other, "_mod.so"]


# ---------------------------------------------------------------- real builds, by venv
def develop(python: Path, project: Path, wheelhouse: Path, *cmake_args: str) -> subprocess.CompletedProcess:
    env = venv_env(python, wheelhouse, CMAKE_ARGS=" ".join(cmake_args))
    return run([python.parent / "buildkit", "develop", project], env=env)


def imported(python: Path, cwd: Path) -> tuple[int, str]:
    """The value the imported module returns, and the file it came from."""
    out = run([python, "-c", "import sabitoggle._mod as m; print(m.value(), m.__file__)"], cwd=cwd).stdout
    value, origin = out.split()
    return int(value), Path(origin).name


def set_value(project: Path, value: int) -> None:
    source = project / "mod.c"
    text = source.read_text()
    source.write_text("\n".join(f"#define VALUE {value}" if line.startswith("#define VALUE") else line
                                for line in text.splitlines()) + "\n")


@pytest.mark.slow
def test_a_stable_abi_rebuild_is_what_python_312_imports(venvs, wheelhouse, test_package, tmp_path):
    python = venvs("3.12")
    project = test_package("stable_abi_toggle")
    develop(python, project, wheelhouse)
    develop(python, project, wheelhouse, "-DSTABLE_ABI=ON")
    modules = sorted(p.name for p in (project / "sabitoggle").glob("_mod*"))
    assert modules == ["_mod.abi3.so"], modules  # no .cpython-312 copy beside it
    set_value(project, 2)
    develop(python, project, wheelhouse, "-DSTABLE_ABI=ON")
    (tmp_path / "elsewhere").mkdir()
    assert imported(python, tmp_path / "elsewhere") == (2, "_mod.abi3.so")
    # A module the user left there, which Python imports first, stops the next develop by name.
    stale = project / "sabitoggle" / "_mod.cpython-312-x86_64-linux-gnu.so"
    stale.write_bytes((project / "sabitoggle" / "_mod.abi3.so").read_bytes())
    set_value(project, 3)
    refused = run([python.parent / "buildkit", "develop", project], check=False,
                  env=venv_env(python, wheelhouse, CMAKE_ARGS="-DSTABLE_ABI=ON"))
    output = refused.stdout + refused.stderr
    # Compared squashed: the box wraps a long path anywhere (the temporary folder's name varies).
    assert refused.returncode != 0 and "_mod.cpython-312" in squashed(unboxed(output)) and "Traceback" not in output, output
    assert squashed("Delete each named file") in squashed(unboxed(output)) and stale.exists()


@pytest.mark.slow
def test_developing_under_311_and_312_by_turns_imports_each_fresh_build(venvs, wheelhouse, test_package, tmp_path):
    pythons = {"3.11": venvs("3.11"), "3.12": venvs("3.12")}
    project = test_package("stable_abi_toggle")
    (tmp_path / "elsewhere").mkdir()
    built = {}
    stamp = project / "sabitoggle" / "built-for.txt"  # one path for both: the last develop's
    for value, version in enumerate(["3.11", "3.12", "3.11", "3.12"], start=1):
        if value <= 3:
            set_value(project, value)
        done = develop(pythons[version], project, wheelhouse, "-DPYTHON_STAMP=ON")
        output = done.stdout + done.stderr
        if value == 4:  # back to 3.12: its own build folder, no configure; its installed file back
            assert "configuring" not in output, output
            assert squashed("built-for.txt was replaced since this build folder installed it") in squashed(output)
        built[version] = min(value, 3)
        tag = version.replace(".", "")
        number, origin = imported(pythons[version], tmp_path / "elsewhere")
        assert (number, origin.split(".")[1]) == (built[version], f"cpython-{tag}-x86_64-linux-gnu"), (version, origin)
        assert stamp.read_text() == f"{version}\n", (version, stamp.read_text())
        # Each interpreter builds in its own folder, so the other keeps its build.
        assert (build_folder(project, pythons[version]) / "CMakeCache.txt").is_file()
        # The other interpreter's in-place module is left alone: it still imports its own last build.
        for other, python in pythons.items():
            if other != version and other in built:
                assert imported(python, tmp_path / "elsewhere")[0] == built[other], other
    assert {p.name for p in (project / "build").iterdir() if p.name.startswith("cpython-")} == {
        build_folder(project, python).name for python in pythons.values()}


@pytest.mark.slow
def test_a_311_wheel_after_a_312_develop_holds_no_312_module(venvs, wheelhouse, test_package, tmp_path):
    python312, python311 = venvs("3.12"), venvs("3.11")
    project = test_package("stable_abi_toggle")
    develop(python312, project, wheelhouse)
    left = project / "sabitoggle" / "_mod.cpython-312-x86_64-linux-gnu.so"
    assert left.is_file()
    # An older buildkit's in-place copy was in no manifest: the build folder forgets it the same way.
    for state in build_folder(project).glob(".buildkit/manifest-*.txt"):
        state.unlink()
    (build_folder(project) / INSTALL_MANIFEST).unlink(missing_ok=True)
    built = pip_into(python311, wheelhouse, "wheel", "-v", "--no-deps", "-w", tmp_path / "dist", project)
    wheel = only_wheel(tmp_path / "dist")
    assert "-cp311-cp311-" in wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if "cpython-312" in n], names
    assert [n for n in names if n.startswith("sabitoggle/_mod.cpython-311")], names
    assert f"left out of the wheel: {left.name}" in built.stdout + built.stderr


@pytest.mark.slow
def test_a_compiled_program_in_the_scripts_folder_ships_as_it_is(wheelhouse, test_package, tmp_path):
    python = Path(sys.executable)
    project = test_package("stable_abi_toggle")
    pip_into(python, wheelhouse, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist",
             project, CMAKE_ARGS="-DNATIVE_SCRIPT=ON")
    wheel = only_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("sabitoggle-1.0.0.data/scripts/sabitoggle-native")
        mode = archive.getinfo("sabitoggle-1.0.0.data/scripts/sabitoggle-native").external_attr >> 16
    built = build_folder(project) / "wheel-dirs" / "scripts" / "sabitoggle-native"
    assert shipped == built.read_bytes() and mode & 0o111
    target = tmp_path / "installed"
    run([python, "-m", "pip", "install", "-q", "--no-deps", "--target", target, wheel])
    assert run([target / "bin" / "sabitoggle-native"]).stdout.strip() == "native program ran"


@pytest.mark.parametrize("name, other", [
    ("_mod.cpython-39-x86_64-linux-gnu.so", True),
    ("_mod.cpython-313t-x86_64-linux-gnu.so", True),
    ("_mod.cp39-win_amd64.pyd", True),
    (f"_mod{SUFFIXES[0]}", False),  # this interpreter's own
    ("_mod.abi3.so", False),
    ("libfoo.so", False),
])
def test_another_interpreters_module_is_told_by_its_versioned_suffix(name: str, other: bool) -> None:
    assert module_shadows.another_interpreters_module(f"/pkg/{name}") is other
