"""`buildkit init`: the scaffold, its refusal to overwrite, and real builds of what it writes.

The slow tests generate each combination of (CUDA on/off) x (split on/off), build it
with `python setup.py develop` in an overlay venv and run the project's *own*
generated tests, unedited, from a neutral folder (so `import <name>` goes through
the editable registration) and from the project folder. CUDA is compiled for one
architecture and never run (the generated tests skip their GPU-only checks).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from buildkit._util.resources import templates_dir
from buildkit.config.options import option_keys
from buildkit.config.settings import load_settings
from buildkit.frontends.cli import init
from buildkit_testing.cuda import find_nvcc
from buildkit_testing.processes import clean_env, run, setup_py, unboxed
from buildkit_testing.venvs import overlay_venv, site_packages

BUILDKIT = [sys.executable, "-m", "buildkit"]


def combos(*, mark_cuda: bool) -> list:
    return [pytest.param(cuda, split, id=f"{'cuda' if cuda else 'cpu'}-{'split' if split else 'full'}",
                         marks=[pytest.mark.cuda] if cuda and mark_cuda else [])
            for cuda in (False, True) for split in (False, True)]


def scaffold(target: Path, *options: str, check: bool = True):
    return run([*BUILDKIT, "init", target, *options], env=clean_env(), check=check)


# ------------------------------------------------------------------ fast checks

@pytest.mark.parametrize("cuda, split", combos(mark_cuda=False))
def test_every_combination_renders_a_consistent_project(tmp_path, cuda, split):
    choices = init.Choices("my-lib", cuda, split)
    files = init.render(choices)
    for path, text in files.items():
        assert not re.search(r"(?m)^\s*\$[a-z_]+\s*$", text), f"unexpanded block in {path}"
        assert "$name" not in text and "${name}" not in text and "$prefix" not in text, path
    assert len(files["setup.py"].splitlines()) < 30
    pyproject = tomllib.loads(files["pyproject.toml"])
    assert pyproject["build-system"] == {"requires": ["setuptools-buildkit"], "build-backend": "buildkit.build_meta"}
    table = pyproject["tool"]["buildkit"]
    assert table["package"] == "my_lib" and table["extension"]["name"] == "my_lib._C"
    assert ("preload-libraries" in table) == split and ("library-distribution" in table) == split
    assert ("cuda-arch-list" in table) == cuda
    cmake = files["CMakeLists.txt"]
    assert "include(Buildkit)" in cmake and "buildkit_python_binding_library(my_lib_python" in cmake
    assert ("BUILDKIT_WHEEL_MODE" in cmake) == split and ("option(USE_CUDA" in cmake) == cuda
    assert ("csrc/my_lib_cuda.cu" in files) == cuda and ("cmake/MyLibConfig.cmake.in" in files) == split
    workflow = files[".github/workflows/wheels.yml"]
    assert f"python -m buildkit wheels . --kind {'split' if split else 'full'}" in workflow
    assert ("MY_LIB_CUDA_ARCH_LIST" in workflow) == cuda
    try:
        import yaml
    except ImportError:  # pyyaml is a test dependency; without it, skip only this check
        yaml = None
    if yaml is not None:
        step = yaml.safe_load(workflow)["jobs"]["wheels"]["steps"][3]
        assert step["run"].startswith("python -m buildkit wheels") and ("env" in step) == cuda
    assert "tests/test_my_lib.py" in files and "/my_lib/lib/" in files[".gitignore"]
    compile(files["my_lib/__init__.py"], "__init__.py", "exec")
    compile(files["tests/test_my_lib.py"], "test_my_lib.py", "exec")

    # buildkit itself accepts the [tool.buildkit] table it wrote (settings are validated strictly).
    init.init_project(tmp_path, choices, out=open(os.devnull, "w"))
    settings = load_settings(tmp_path, option_keys())
    assert settings.package == "my_lib" and settings.env_prefix == "MY_LIB"


def test_every_template_file_is_used():
    root = templates_dir() / "project"
    used = {source for source, _, _ in init.MANIFEST}
    blocks = {f"_blocks/{b}" for b in init.Choices("x", True, True).blocks()}
    for path in root.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            relative = path.relative_to(root).as_posix()
            assert relative in used or relative.rsplit(".", 2)[0] in blocks, f"unused template {relative}"
    for source in used:
        assert (root / source).is_file(), source


def test_dry_run_lists_every_file_and_writes_nothing(tmp_path):
    target = tmp_path / "fresh"
    result = scaffold(target, "--name", "fresh", "--split", "--dry-run")
    listed = re.findall(r"^\s+create\s+(\S+)$", result.stdout, re.M)
    assert set(listed) == set(init.render(init.Choices("fresh", False, True)))
    assert {"CMakeLists.txt", "setup.py", "pyproject.toml", ".gitignore", ".github/workflows/wheels.yml",
            "tests/test_fresh.py", "fresh/__init__.py", "cmake/FreshConfig.cmake.in"} <= set(listed)
    assert "nothing written" in result.stdout
    assert not target.exists()


def test_refuses_to_overwrite_unless_forced(tmp_path):
    target = tmp_path / "proj"
    target.mkdir()
    (target / "setup.py").write_text("# mine\n")
    (target / "notes.txt").write_text("kept\n")
    refused = scaffold(target, check=False)
    assert refused.returncode == 1
    assert "would overwrite 1 existing file(s)" in refused.stderr and "setup.py" in refused.stderr
    assert "--force" in refused.stderr and "Traceback" not in refused.stderr
    assert re.search(r"^\s+exists\s+setup.py$", refused.stdout, re.M)  # the listing marks the refusal
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt", "setup.py"], "wrote something anyway"
    assert (target / "setup.py").read_text() == "# mine\n"

    # --dry-run reports the same refusal; --force overwrites and says so.
    assert scaffold(target, "--dry-run", check=False).returncode == 1
    forced = scaffold(target, "--force")
    assert re.search(r"^\s+overwrite\s+setup.py$", forced.stdout, re.M)
    assert re.search(r"^\s+create\s+CMakeLists.txt$", forced.stdout, re.M)
    assert "from buildkit import setup" in (target / "setup.py").read_text()
    assert (target / "notes.txt").read_text() == "kept\n"

    # The same project again: nothing differs, so nothing is refused or rewritten.
    again = scaffold(target)
    assert re.findall(r"^\s+(\w+)\s", again.stdout, re.M) == ["unchanged"] * len(init.render(
        init.Choices("proj", False, False)))
    # Another configuration differs: refused again.
    assert scaffold(target, "--cuda", check=False).returncode == 1

    # A file where a folder must go can't be overwritten, even with --force.
    other = tmp_path / "blocked"
    other.mkdir()
    (other / "include").write_text("not a folder\n")
    blocked = scaffold(other, "--force", check=False)
    assert blocked.returncode == 1 and "in the way" in unboxed(blocked.stderr)
    assert sorted(p.name for p in other.iterdir()) == ["include"]


@pytest.mark.parametrize("name, reason", [("namespace", "C++ keyword"), ("json", "standard library"),
                                          ("import", "Python keyword"), ("all", "CMake"),
                                          ("2fast", "cannot be a project name"), ("my lib", "cannot be")])
def test_unusable_names_are_refused(tmp_path, name, reason):
    result = scaffold(tmp_path / "x", "--name", name, check=False)
    assert result.returncode == 1 and reason in unboxed(result.stderr) and "--name" in result.stderr
    assert not (tmp_path / "x").exists()


def test_name_defaults_to_the_folder(tmp_path):
    result = scaffold(tmp_path / "Fast-Thing", "--dry-run")
    assert "project 'Fast-Thing' (import fast_thing" in result.stdout
    assert "fast_thing/__init__.py" in result.stdout


def test_init_is_a_listed_subcommand():
    assert "init" in run([*BUILDKIT, "--help"]).stdout
    assert "--split" in run([*BUILDKIT, "init", "--help"]).stdout


# ------------------------------------------------------------------ real builds

def develop(python: Path, project: Path, **env: str):
    return setup_py(python, project, "develop", env=clean_env(**env))


def own_tests(python: Path, project: Path, neutral: Path) -> str:
    """The generated tests, unedited: from a neutral folder, then from the project folder."""
    neutral.mkdir(exist_ok=True)
    away = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", project / "tests"], cwd=neutral)
    here = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project)
    assert re.search(r"\d+ passed", here.stdout)
    return away.stdout


@pytest.mark.slow
@pytest.mark.parametrize("cuda, split", combos(mark_cuda=True))
def test_generated_project_builds_and_passes_its_own_tests(tmp_path, cuda, split):
    if cuda and find_nvcc() is None:
        pytest.skip("nvcc not found (CUDACXX, PATH, /usr/local/cuda/bin)")
    name = f"gen_{'cuda' if cuda else 'cpu'}_{'split' if split else 'full'}"
    project = tmp_path / name
    scaffold(project, *(["--cuda"] if cuda else []), *(["--split"] if split else []))
    python = overlay_venv(tmp_path / "venv")
    env = {f"{name.upper()}_CUDA_ARCH_LIST": "8.0"} if cuda else {}
    develop(python, project, **env)

    summary = own_tests(python, project, tmp_path / "elsewhere")
    assert " passed" in summary and "failed" not in summary and "error" not in summary
    probe = (f"import json, {name} as m; print(json.dumps([m.__file__, m.__version__, "
             f"m.built_with_cuda() and m.cuda_architectures() if {cuda} else None]))")
    location, version, architectures = json.loads(run([python, "-c", probe], cwd=tmp_path / "elsewhere").stdout)
    assert Path(location).is_relative_to(project) and version == "0.1.0"
    if cuda:
        assert architectures == "80", "built without CUDA although nvcc is there"
    assert (project / name / "lib" / f"lib{name}.so").is_file()
    assert (project / name / "_native.py").is_file() == split
    assert (project / "compile_commands.json").is_file()


@pytest.mark.slow
def test_generated_split_project_builds_its_two_wheels(tmp_path):
    """The split scaffold end to end: the library-only wheel, installed; then a
    python-only develop build that compiles only the bindings and loads the library
    from the installed wheel; the generated tests pass against that."""
    source = tmp_path / "sp"
    scaffold(source, "--split")
    python = overlay_venv(tmp_path / "venv")
    setup_py(python, source, "bdist_wheel", "-d", tmp_path / "dist", env=clean_env(BUILD_LIBTORCH_WHL="1"))
    wheel = next((tmp_path / "dist").glob("libsp-0.1.0-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "libsp/lib/libsp.so" in names and "libsp/share/cmake/Sp/SpConfig.cmake" in names
    assert not any(n.startswith("sp/") or "_python" in n for n in names)
    # "Install" it: a wheel is a zip of site-packages (the overlay venv has no pip).
    site = site_packages(python)
    zipfile.ZipFile(wheel).extractall(site)

    project = tmp_path / "python-only"
    scaffold(project, "--name", "sp", "--split")
    develop(python, project, BUILD_PYTHON_ONLY="1")
    compiled = [Path(e["file"]).name for e in json.loads((project / "compile_commands.json").read_text())]
    assert compiled == ["python_bindings.cpp"]
    assert sorted(p.name for p in (project / "sp" / "lib").iterdir()) == ["libsp_python.so"]
    own_tests(python, project, tmp_path / "elsewhere")
    loaded = run([python, "-c", "import sp, sp._native as n; print(n._loaded[0]._name)"], cwd=tmp_path).stdout
    assert Path(loaded.strip()).is_relative_to(site)
