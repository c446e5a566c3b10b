"""The build folder is one buildkit owns (buildkit/builder/build_folder.py): a claim refuses
the project's own folders and folders it did not make, ``clean`` removes only a claimed
folder and waits for a build running there, and a lock whose file a clean removed is
taken again on the new one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buildkit.builder.build_folder import BuildFolderRefused, carries_marker, claim_build_folder
from buildkit.builder.build_lock import lock_build_folder
from buildkit.config.options import option_keys
from buildkit.config.settings import load_settings
from buildkit.frontends.clean import clean_project
from buildkit_testing.git import commit_all, needs_git
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, squashed, unboxed
from buildkit_testing.projects import DEMO_PROJECT, add_settings, with_build_dir, write_files
from buildkit_testing.projects import write_file as write


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "proj", DEMO_PROJECT)
    write(tmp_path / "canary" / "alive.txt", "alive")
    return root


def claim(root: Path) -> Path:
    settings = load_settings(root, option_keys())
    claim_build_folder(settings.build_dir, settings.root, settings.project_folders)
    return settings.build_dir


@pytest.mark.parametrize("build_dir, reason", [
    (".", "the project root"),
    ("..", "a folder holding the project root"),
    ("demo", "the project folder"),
    ("demo/build", "inside the project folder"),
    ("src", "a folder buildkit did not make: it holds demo.cpp"),
    ("pyproject.toml", "not a folder"),
    ("loop", "not a folder"),
    ("../canary", "a folder buildkit did not make: it holds alive.txt"),
])
def test_a_claim_refuses_what_buildkit_did_not_make(project: Path, build_dir: str, reason: str) -> None:
    (project / "loop").symlink_to(project / "loop")
    before = sorted(str(p) for p in project.parent.rglob("*"))
    with pytest.raises(BuildFolderRefused) as refused:
        claim(with_build_dir(project, build_dir))
    assert reason in refused.value.reason and "build-dir" in str(refused.value), str(refused.value)
    assert "Set [tool.buildkit] build-dir" in str(refused.value) or "Remove" in str(refused.value)
    after = sorted(str(p) for p in project.parent.rglob("*"))
    assert before == after[:len(before)] and set(after) - set(before) <= {str(project / "pyproject.toml")}


def test_a_claim_takes_a_new_empty_or_earlier_build_folder(project: Path) -> None:
    build = claim(project)
    assert carries_marker(build)
    claim(project)  # again: the marker is enough
    empty = with_build_dir(project, "empty-build")
    (project / "empty-build").mkdir()
    assert carries_marker(claim(empty))
    # An earlier buildkit's folder: state beside a CMake cache, adopted.
    earlier = with_build_dir(project, "old-build")
    write(project / "old-build" / "CMakeCache.txt")
    write(project / "old-build" / ".buildkit" / "configure.json", "{}")
    assert carries_marker(claim(earlier))
    # A marked folder that became a package folder is refused all the same.
    with pytest.raises(BuildFolderRefused):
        claim(with_build_dir(project, "demo/../demo"))


@needs_git
def test_an_earlier_build_folder_holding_tracked_files_is_not_adopted(project: Path) -> None:
    write(project / "old-build" / "CMakeCache.txt")
    write(project / "old-build" / ".buildkit" / "configure.json", "{}")
    commit_all(project)
    with pytest.raises(BuildFolderRefused, match="files git tracks"):
        claim(with_build_dir(project, "old-build"))


@pytest.mark.parametrize("build_dir, folder", [("src", "src"), ("demo", "demo"), (".", ".")])
def test_clean_keeps_a_build_dir_that_is_not_a_build_folder(project: Path, build_dir: str, folder: str) -> None:
    with_build_dir(project, build_dir)
    write(project / folder / "new_source.cpp", "int g();\n")  # untracked, as a new file is
    before = sorted(str(p) for p in (project / folder).rglob("*"))
    report = clean_project(load_settings(project, option_keys()))
    assert sorted(str(p) for p in (project / folder).rglob("*")) == before
    assert any("not a build folder buildkit made" in reason for _, reason in report.kept), report.kept


@needs_git
def test_clean_in_a_checkout_keeps_an_untracked_source_in_a_source_folder(project: Path) -> None:
    commit_all(project)
    write(project / "src" / "new.cpp", "int g();\n")
    clean_project(load_settings(with_build_dir(project, "src"), option_keys()))
    assert (project / "src" / "new.cpp").is_file() and (project / "src" / "demo.cpp").is_file()


def test_clean_waits_for_the_build_holding_the_folder(project: Path) -> None:
    build = claim(project)
    write(build / "obj.o")
    with lock_build_folder(build):
        cleaner = subprocess.Popen([sys.executable, "-m", "buildkit", "clean", str(project)], env=clean_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(1.5)
        assert cleaner.poll() is None and (build / "obj.o").is_file(), "clean did not wait for the build"
    output, _ = cleaner.communicate(timeout=60)
    assert cleaner.returncode == 0, output
    assert "waiting for another build" in output and not build.exists(), output


# A process that waits for the lock and then reports what it holds.
WAITER = """
import os, sys
from buildkit.builder.build_lock import lock_build_folder
with lock_build_folder(sys.argv[1], timeout=60):
    held = os.path.join(sys.argv[1], ".buildkit", "lock")
    print("holds", os.path.exists(held), flush=True)
"""


def test_a_lock_whose_file_was_removed_meanwhile_is_taken_on_the_new_file(tmp_path: Path) -> None:
    build = tmp_path / "build"
    with lock_build_folder(build):
        waiter = subprocess.Popen([sys.executable, "-c", WAITER, str(build)], env=clean_env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(1.0)  # the waiter has opened the lock file and waits on it
        for path in sorted(build.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        build.rmdir()  # what a clean holding the lock does
    output, _ = waiter.communicate(timeout=60)
    assert "holds True" in output, output


@pytest.mark.slow
def test_develop_refuses_a_source_folder_and_clean_racing_a_develop_waits(test_package, tmp_path: Path) -> None:
    project = test_package("minimal", tmp_path / "minimal")
    env = clean_env(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path))
    text = (project / "pyproject.toml").read_text()
    source_folder = "csrc"
    add_settings(project, f'build-dir = "{source_folder}"')
    before = {p: p.read_bytes() for p in (project / source_folder).rglob("*") if p.is_file()}
    refused = run([sys.executable, "-m", "buildkit", "develop", project], cwd=project, env=env, check=False)
    output = unboxed(refused.stdout + refused.stderr)
    assert refused.returncode == 1 and "Traceback" not in output, output
    expected = f"build-dir {project / source_folder} is a folder buildkit did not make"
    assert squashed(expected) in squashed(output), output  # the box wraps a long path anywhere
    assert {p: p.read_bytes() for p in (project / source_folder).rglob("*") if p.is_file()} == before

    (project / "pyproject.toml").write_text(text)
    develop = subprocess.Popen([sys.executable, "-m", "buildkit", "develop", str(project)], cwd=project, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (build_folder(project) / ".buildkit" / "lock").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        cleaned = run([sys.executable, "-m", "buildkit", "clean", project], cwd=project, env=env, check=False)
        output, _ = develop.communicate(timeout=600)
    finally:
        if develop.poll() is None:
            os.killpg(develop.pid, signal.SIGKILL)
    assert develop.returncode == 0 and "Traceback" not in output, output
    assert cleaned.returncode == 0 and "Traceback" not in cleaned.stderr, cleaned.stderr
    assert "waiting for another build" in cleaned.stderr and not (project / "build").exists(), cleaned.stderr
