"""Where a project's Python code lives: src/, python/, package-dir mappings, several
top-level packages, top-level modules, and CMake installing at the wheel's root.

The failures this guards against were silent: a src/ layout whose develop "succeeded"
into a new ./pkg/ beside src/pkg (and an import that then failed), a top-level
module that needed a placeholder folder, an editable install that put the whole
project folder on sys.path (`import setup` ran the project's setup.py).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest

from buildkit.config.python_layout import PythonLayout, detect_layout
from buildkit.config.settings import load_settings
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.git import commit_all, git
from buildkit_testing.processes import clean_env, run
from buildkit_testing.projects import write_file, write_files, write_pyproject
from buildkit_testing.venvs import make_venv, venv_env

P = PurePosixPath


# --- detection ---------------------------------------------------------------------

@pytest.mark.parametrize("folder, root", [("src/pkg", "src"), ("python/pkg", "python"), ("pkg", ".")])
def test_the_tree_decides_in_scikit_build_cores_order(tmp_path: Path, folder: str, root: str) -> None:
    (tmp_path / folder).mkdir(parents=True)
    layout = detect_layout(tmp_path, "pkg")
    assert layout.package_root == P(root) and layout.folder_of("pkg.sub") == P(folder) / "sub"


def test_src_wins_over_a_folder_of_the_same_name_at_the_root(tmp_path: Path) -> None:
    # The reported bug: develop built a new ./simplest/ beside src/simplest.
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "pkg").mkdir()
    assert detect_layout(tmp_path, "pkg").folder_of("pkg") == P("src/pkg")


def test_setuptools_tables_are_read(tmp_path: Path) -> None:
    write_files(tmp_path, {"lib/a/__init__.py": "", "lib/b/__init__.py": "", "lib/notes/x.txt": ""})
    found = detect_layout(tmp_path, "a", setuptools_table={"packages": {"find": {"where": ["lib"]}}})
    assert found == PythonLayout(P("lib"), {"a": P("lib/a"), "b": P("lib/b")}, (), "[tool.setuptools]")
    mapped = detect_layout(tmp_path, "a", setuptools_table={"package-dir": {"": "lib", "c": "other/c"},
                                                             "packages": ["a", "a.sub", "c"], "py-modules": ["m"]})
    assert mapped.folder_of("c") == P("other/c") and mapped.py_modules == ("m",)
    assert mapped.setuptools_package_dir() == {"": "lib", "c": "other/c"}


def test_explicit_packages_and_modules_win(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    layout = detect_layout(tmp_path, "pkg", packages=("code/one", "code/two"), py_modules=("tool",),
                           setuptools_table={"package-dir": {"": "src"}})
    assert layout.package_root == P("code") and layout.top_level_packages == ("one", "two")
    assert layout.py_modules == ("tool",) and layout.setuptools_package_dir() == {"": "code"}


def test_declared_packages_name_the_package_when_the_project_name_is_not_one(tmp_path: Path) -> None:
    """A package named otherwise than the project: its rules and generated files go there,
    not into a folder named after the project that nothing ships."""
    settings = load_settings(write_pyproject(tmp_path, 'packages = ["python/shared_pkg"]', name="navigate-editable"))
    assert settings.package == "shared_pkg" and settings.package_dir == tmp_path / "python" / "shared_pkg"
    write_pyproject(tmp_path, 'packages = ["python/other", "python/shared_pkg"]', name="shared-pkg")
    assert load_settings(tmp_path).package == "shared_pkg"  # the project's name, when it is one of them


def test_a_cmakelists_written_for_scikit_build_core_installs_at_the_wheel_root(tmp_path: Path) -> None:
    write_files(write_pyproject(tmp_path, name="pkg"), {
        "src/pkg/__init__.py": "", "CMakeLists.txt": "project(pkg LANGUAGES C)\ninstall(FILES a DESTINATION pkg)\n"})
    assert load_settings(tmp_path).install_prefix.value == "package"  # PyTorch's layout
    (tmp_path / "CMakeLists.txt").write_text("project(${SKBUILD_PROJECT_NAME} LANGUAGES C)\n")
    assert load_settings(tmp_path).install_prefix.value == "wheel-root"


def test_no_package_folder_yet_means_wheel_root(tmp_path: Path) -> None:
    write_file(write_pyproject(tmp_path, name="topext") / "src" / "helper.py", "")
    settings = load_settings(tmp_path)
    assert settings.install_prefix.value == "wheel-root"
    assert settings.package_root == tmp_path / "src" and not settings.layout.package_folders
    assert settings.static_version == "1.0"


# --- builds ------------------------------------------------------------------------

def _checks_from_elsewhere(python: Path, project: Path, cwd: Path) -> None:
    """The package, the top-level module and extension import from an unrelated folder;
    the project's setup.py and tests do not (the test venv sees buildkit's own checkout,
    so the check is on where a name would come from, not on whether it imports)."""
    probe = ("import importlib.util, sys, srcpkg, pmod, topmod\n"
             "assert srcpkg.triple(5) == 15 and topmod.answer() == 42, 'wrong modules'\n"
             "assert srcpkg.built_with() == 'srcpkg 0.3.0', srcpkg.built_with()\n"
             "assert pmod.greeting() == 'hello from pmod'\n"
             "for name in ('setup', 'tests'):\n"
             "    spec = importlib.util.find_spec(name)\n"
             "    places = [spec.origin or '', *(spec.submodule_search_locations or [])] if spec else []\n"
             "    if any(p.startswith(sys.argv[1]) for p in places):\n"
             "        raise SystemExit(f'{name} comes from the project folder: {places}')\n")
    # A folder named like the package in the current directory (a checkout's parent folder)
    # must not shadow the editable package as an empty namespace package.
    (cwd / "srcpkg").mkdir(exist_ok=True)
    run([python, "-c", probe, f"{project}/"], cwd=cwd, env=clean_env())
    # A regular package of that name on PYTHONPATH wins, as it would over an installed wheel.
    other = write_files(cwd / "elsewhere", {"srcpkg/__init__.py": "COPY = True\n"})
    found = run([python, "-c", "import srcpkg; print(srcpkg.COPY)"], cwd=cwd, env=clean_env(PYTHONPATH=str(other)))
    assert found.stdout.strip() == "True"


FRONT_ENDS = {
    "buildkit develop": lambda python, project: [python, "-m", "buildkit", "develop", project],
    "setup.py develop": lambda python, project: [python, project / "setup.py", "develop"],
    "pip install -e": lambda python, project: [python, "-m", "pip", "install", "-q", "--no-deps",
                                               "--no-build-isolation", "-e", project],
}


@pytest.mark.slow
@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_src_layout_develops_in_place_and_exposes_only_its_modules(
        front_end: str, test_package: Callable[..., Path], overlay_python: Path, tmp_path: Path) -> None:
    project = test_package("src_layout")
    # A setup.py that must stay unimportable; the package itself needs none.
    (project / "setup.py").write_text("from buildkit import setup\n\nsetup()\n")
    run(FRONT_ENDS[front_end](overlay_python, project), cwd=project, env=clean_env())
    assert not (project / "srcpkg").exists(), "installed beside src/srcpkg instead of into it"
    assert list((project / "src" / "srcpkg").glob("_core.*.so")) and list((project / "src").glob("topmod.*.so"))
    _checks_from_elsewhere(overlay_python, project, tmp_path)


@pytest.mark.slow
def test_src_layout_wheel_holds_what_it_imports(test_package: Callable[..., Path], overlay_python: Path,
                                                tmp_path: Path) -> None:
    project = test_package("src_layout")
    commit_all(project)
    (project / "src" / "srcpkg" / "debug.log").write_text("a local file that .gitignore names\n")
    run([overlay_python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist",
         project], env=clean_env())
    run([overlay_python, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp_path / "dist2", project],
        env=clean_env())
    # Wheel builds stage under build/: no .so, generated file or compile_commands.json in the tree.
    outside_build = [line for line in git(project, "status", "--porcelain", "--ignored").splitlines()
                     if not line[3:].startswith("build/")]
    assert outside_build == ["!! src/srcpkg/debug.log"], outside_build
    wheel = only_wheel(tmp_path / "dist")
    assert set(zipfile.ZipFile(wheel).namelist()) == set(zipfile.ZipFile(only_wheel(tmp_path / "dist2")).namelist())
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"pmod.py", "srcpkg/__init__.py"} <= names
    # Data files of the package folder ship without a rule (scikit-build-core does the same);
    # what .gitignore names does not.
    assert {"srcpkg/py.typed", "srcpkg/data/table.csv"} <= names and "srcpkg/debug.log" not in names
    assert any(n.startswith("srcpkg/_core.") for n in names) and any(n.startswith("topmod.") for n in names)
    assert not any(n.startswith(("tests/", "src/", "setup")) for n in names), sorted(names)
    # SKBUILD_DATA_DIR and SKBUILD_SCRIPTS_DIR land in the wheel's .data folders; SKBUILD_NULL_DIR nowhere.
    assert {"srcpkg-0.3.0.data/data/share/srcpkg/template.txt", "srcpkg-0.3.0.data/scripts/srcpkg-hello"} <= names
    assert len([n for n in names if n.endswith("built_with.txt.in")]) == 0
    assert wheel.name.startswith("srcpkg-0.3.0-cp3"), wheel.name


@pytest.mark.slow
def test_a_top_level_module_needs_no_placeholder_folder(test_package: Callable[..., Path], wheelhouse: Path,
                                                        tmp_path: Path) -> None:
    """pip's isolated build asks for the build requirements (egg_info) before anything is
    built: nothing may read a package folder that does not exist yet."""
    project = test_package("top_module")
    python = make_venv(tmp_path / "venv")
    run([python, "-m", "pip", "install", "-q", project], env=venv_env(python, wheelhouse), cwd=tmp_path)
    done = run([python, "-c", "import topext; print(topext.add(2, 3), topext.version)"], cwd=tmp_path,
               env=clean_env())
    assert done.stdout.split() == ["5", "1.2.0"]
    assert not (project / "topext").exists()


NAMESPACE_PROJECT = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools-buildkit"]\nbuild-backend = "buildkit.build_meta"\n\n'
                      '[project]\nname = "acme-widgets"\nversion = "2.0.0"\n\n'
                      '[tool.buildkit]\npackage = "acme.widgets"\ninstall-prefix = "wheel-root"\n',
    # acme/ has no __init__.py: a PEP 420 namespace shared with other distributions.
    "src/acme/widgets/__init__.py": "from ._fast import double\n",
    "src/acme/widgets/shapes.py": "SIDES = {'triangle': 3}\n",
    "fast.c": '#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n'
              'static PyObject* d(PyObject* s, PyObject* a) { return PyNumber_Add(a, a); }\n'
              'static PyMethodDef m[] = {{"double", d, METH_O, 0}, {0}};\n'
              'static struct PyModuleDef md = {PyModuleDef_HEAD_INIT, "_fast", 0, -1, m};\n'
              'PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&md); }\n',
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.24)\nproject(acme LANGUAGES C)\n"
                      "find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)\n"
                      "Python_add_library(_fast MODULE fast.c WITH_SOABI)\n"
                      "install(TARGETS _fast DESTINATION acme/widgets)\n",
}


@pytest.mark.slow
def test_a_namespace_package_builds_into_its_namespace(overlay_python: Path, tmp_path: Path) -> None:
    project = write_files(tmp_path / "acme-widgets", NAMESPACE_PROJECT)
    run([overlay_python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist",
         project], env=clean_env())
    names = set(zipfile.ZipFile(only_wheel(tmp_path / "dist")).namelist())
    assert {"acme/widgets/__init__.py", "acme/widgets/shapes.py"} <= names, sorted(names)
    assert any(n.startswith("acme/widgets/_fast.") and n.endswith(".so") for n in names), sorted(names)
    assert "acme/__init__.py" not in names  # the namespace stays open to other distributions
    run([overlay_python, "-m", "buildkit", "develop", project], env=clean_env())
    assert list((project / "src" / "acme" / "widgets").glob("_fast.*.so")) and not (project / "acme").exists()
    probe = "import acme.widgets, acme.widgets.shapes as s; print(acme.widgets.double(21), s.SIDES['triangle'])"
    assert run([overlay_python, "-c", probe], cwd=tmp_path, env=clean_env()).stdout.split() == ["42", "3"]
