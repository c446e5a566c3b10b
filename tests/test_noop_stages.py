"""The no-op develop's second stage takes the first stage's scans of the installed trees'
sources only where no edge of the build can have changed them."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from buildkit.builder import ninja_status
from buildkit.builder.build_output import StepResult
from buildkit.frontends.noop_finish import _still_valid
from buildkit_testing.processes import clean_env, run

LOG_HEADER = "# ninja log v7\n"


def log_line(output: str) -> str:
    return f"1\t2\t3\t{output}\tabc\n"


def build_result(*edges: str) -> StepResult:
    return StepResult("build", 0, 0.1, Path("build.log"), steps=len(edges), edges=list(edges))


def test_only_scans_no_edge_can_have_touched_are_kept(tmp_path: Path) -> None:
    build, include, generated = tmp_path / "build", str(tmp_path / "include"), str(tmp_path / "build" / "gen")
    build.mkdir()
    log = build / ".ninja_log"
    log.write_text(LOG_HEADER + log_line("old.o"))
    scans = {(include, True): {f"{include}/a.h": [1, 2, 3, "file"]}, (generated, True): {}}
    before = ninja_status.log_stamp(str(build))

    assert _still_valid(scans, build_result(), str(build), before) == scans  # ninja ran nothing

    with log.open("a") as handle:
        handle.write(log_line("CMakeFiles/x.dir/a.cpp.o") + log_line("gen/x.h"))
    compiled = build_result("Building CXX object CMakeFiles/x.dir/a.cpp.o", "Linking CXX shared library libx.so")
    assert ninja_status.outputs_since(str(build), before) == {str(build / "CMakeFiles/x.dir/a.cpp.o"),
                                                               str(build / "gen" / "x.h")}
    assert set(_still_valid(scans, compiled, str(build), before)) == {(include, True)}  # gen/ got an output

    custom = build_result("Building CXX object a.o", "Generating include/a.h")  # may write anywhere
    assert _still_valid(scans, custom, str(build), before) == {}

    log.write_text(LOG_HEADER)  # ninja recompacted its log: what it wrote cannot be told
    assert _still_valid(scans, compiled, str(build), before) == {}
    os.unlink(log)
    assert _still_valid(scans, compiled, str(build), before) == {}


def test_compile_and_link_edges_are_told_from_custom_commands() -> None:
    for edge in ("Building CXX object CMakeFiles/t.dir/a.cpp.o", "Building CUDA object k.cu.o",
                 "Linking CXX shared library libt.so", "Linking CXX executable app"):
        assert ninja_status.writes_only_its_outputs(edge), edge
    for edge in ("Generating a.h", "Building headers", "Running codegen", "cd /x && python gen.py"):
        assert not ninja_status.writes_only_its_outputs(edge), edge


SLOW_LAUNCHER = "#!/bin/sh\nsleep 1.5\nexec \"$@\"\n"


@pytest.mark.slow
def test_the_summary_counts_the_build_the_first_stage_started(test_package, overlay_python: Path,
                                                              tmp_path: Path) -> None:
    """ninja starts in the first stage, which reads its first lines before the second takes
    over: the summary's build time runs from ninja's start (it showed 0.26 s for a 23.8 s
    compile)."""
    project = test_package("minimal", tmp_path / "minimal")
    launcher = tmp_path / "slow-launcher"
    launcher.write_text(SLOW_LAUNCHER)
    launcher.chmod(0o755)
    env = clean_env(BUILDKIT_COMPILER_LAUNCHER=str(launcher))
    develop = [overlay_python, "-m", "buildkit", "develop", project]  # it registers there, not in the runner's venv
    run(develop, cwd=project, env=env)
    assert "up to date" in run(develop, cwd=project, env=env).stderr
    (project / "csrc" / "minimal.cpp").touch()
    output = run(develop, cwd=project, env=env).stderr
    found = re.search(r"done in ([\d.]+) s: build ([\d.]+) s", output)
    assert found and float(found[2]) >= 1.5 and float(found[1]) >= float(found[2]), output


def answered_by_first_stage(python: Path, project: Path) -> bool:
    """A `buildkit build` with nothing to do (it says "up to date"): whether the no-op's first
    stage answered it, which never loads the project (the full command does)."""
    done = run([python, "-X", "importtime", "-m", "buildkit", "build", project], cwd=project, env=clean_env())
    assert "up to date" in done.stderr and "compiling" not in done.stderr, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return "buildkit.project" not in imported


@pytest.mark.slow
def test_a_module_rebuilt_into_the_package_folder_leaves_the_next_build_a_no_op(
        test_package, overlay_python: Path, tmp_path: Path) -> None:
    """The install step replaces a rebuilt module in the package folder, which moves the
    folder's time: the no-op record counts the folder by its listing, so the build after a
    rebuild is the first stage's no-op again (it was the full command, and for a
    buildkit.torch project its setup.py: 8 s, torch imported).  An editor's save through a
    rename and the bytecode cache an import writes keep the no-op; a module added hands over."""
    project = test_package("src_layout", tmp_path / "src_layout")
    package = project / "src" / "srcpkg"
    run([overlay_python, "-m", "buildkit", "build", project], cwd=project, env=clean_env())
    assert answered_by_first_stage(overlay_python, project)

    core = project / "csrc" / "core.c"
    core.write_text(core.read_text().replace("3 * value", "value * 3"))
    rebuilt = run([overlay_python, "-m", "buildkit", "build", project], cwd=project, env=clean_env()).stderr
    assert "done in" in rebuilt and "configuring" not in rebuilt, rebuilt
    assert answered_by_first_stage(overlay_python, project)

    init = package / "__init__.py"
    (package / "__init__.py.new").write_text(init.read_text() + "# saved\n")
    (package / "__init__.py.new").rename(init)
    (package / "__pycache__").mkdir()
    assert answered_by_first_stage(overlay_python, project)

    (package / "added.py").write_text("")
    assert not answered_by_first_stage(overlay_python, project)  # a new module: the full command, which records it
    assert answered_by_first_stage(overlay_python, project)


@pytest.mark.slow
def test_a_top_level_package_added_to_the_package_root_is_registered(
        test_package, overlay_python: Path, tmp_path: Path) -> None:
    """A wheel-root project whose packages [tool.setuptools]' packages.find finds in src/: a package
    added there, or removed, changes what the editable install registers.  Both the no-op (its
    record held the package folder's listing, not the package root's) and the full develop (its
    develop state held no layout) once said "up to date" and left the registration as it was."""
    project = test_package("src_layout", tmp_path / "src_layout")
    with (project / "pyproject.toml").open("a") as handle:
        handle.write('\n[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    develop = [overlay_python, "-m", "buildkit", "develop", project]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def imports_other() -> bool:
        return run([overlay_python, "-c", "import other"], cwd=elsewhere, env=clean_env(), check=False).returncode == 0

    run(develop, cwd=project, env=clean_env())
    assert "up to date" in run(develop, cwd=project, env=clean_env()).stderr
    assert not imports_other()

    (project / "src" / "other").mkdir()
    (project / "src" / "other" / "__init__.py").write_text("")
    added = run(develop, cwd=project, env=clean_env()).stderr
    assert "registered editable install of srcpkg" in added and "up to date" not in added, added
    assert imports_other()
    assert "up to date" in run(develop, cwd=project, env=clean_env()).stderr

    shutil.rmtree(project / "src" / "other")
    removed = run(develop, cwd=project, env=clean_env()).stderr
    assert "registered editable install of srcpkg" in removed, removed
    assert not imports_other()
