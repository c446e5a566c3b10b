"""One build folder per interpreter (``build-dir = "build/{soabi}"``), and what keeps the
shared in-place tree the last develop's: the placeholders, ``clean`` over every
interpreter's folder and an earlier buildkit's one ``build/``, the notice when a build
starts inside that earlier folder, and an installed file another install wrote over."""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

import pytest

from buildkit._util.interpreter import soabi
from buildkit.builder.build_folder import carries_marker, claim_build_folder
from buildkit.config.options import option_keys
from buildkit.config.settings import load_settings
from buildkit.errors import ConfigError
from buildkit.frontends.clean import clean_project
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, squashed, unboxed
from buildkit_testing.projects import DEMO_PROJECT, with_build_dir, write_files
from buildkit_testing.projects import write_file as write

OTHER = "cpython-399-x86_64-linux-gnu"  # the folder of an interpreter that is not this one


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "proj", DEMO_PROJECT)


def settings_of(root: Path):
    return load_settings(root, option_keys())


def test_the_default_build_folder_is_the_interpreters_own(project: Path) -> None:
    assert soabi() == sysconfig.get_config_var("SOABI")  # read without importing sysconfig
    assert settings_of(project).build_dir == (project / "build" / soabi()).resolve()
    assert settings_of(with_build_dir(project, "out/{cache_tag}")).build_dir == (
        project / "out" / sys.implementation.cache_tag).resolve()
    assert settings_of(with_build_dir(project, "shared")).build_dir == (project / "shared").resolve()


@pytest.mark.parametrize(("template", "named"), [
    ("build/{wheel_tag}", "`{wheel_tag}`"), ("build/{soabi:>9}", "`{soabi:>9}`"), ("build/{0}", "`{0}`"),
    ("build/{", "Write a literal brace twice"), ("build/}", "Write a literal brace twice"),
])
def test_an_unknown_placeholder_is_refused_by_name(project: Path, template: str, named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        settings_of(with_build_dir(project, template))
    text = f"{refused.value.message} {refused.value.hint}"
    assert "build-dir" in text and named in text and "{soabi}" in text or "brace" in named, text


def test_the_command_line_refuses_an_unknown_placeholder_in_one_box(project: Path) -> None:
    with_build_dir(project, "build/{state}")
    done = run([sys.executable, "-m", "buildkit", "develop", project], env=clean_env(), check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in output, output
    assert squashed("`{state}`, which buildkit does not fill") in squashed(unboxed(output)), output
    assert not (project / "build").exists()


def claimed(root: Path, folder: Path) -> Path:
    claim_build_folder(folder, root, settings_of(root).project_folders)
    write(folder / "CMakeCache.txt")
    return folder


def test_clean_removes_every_interpreters_folder_and_an_earlier_single_build(project: Path) -> None:
    earlier = claimed(project, project / "build")  # a buildkit before per-interpreter folders
    write(earlier / "build.ninja")
    mine = claimed(project, build_folder(project))
    other = claimed(project, project / "build" / OTHER)
    module = write(project / "demo" / f"_C.{OTHER}.so")
    write(other / "install_manifest.txt", f"{module}\n")
    write(other / ".buildkit" / "manifest-0.txt", f"{module}\n")
    clean_project(settings_of(project))
    assert not (project / "build").exists(), sorted(p.name for p in (project / "build").iterdir())
    assert not mine.exists() and not module.exists() and (project / "demo" / "__init__.py").is_file()


def test_clean_keeps_a_folder_beside_them_that_buildkit_did_not_make(project: Path) -> None:
    claimed(project, build_folder(project))
    claimed(project, project / "build" / OTHER)
    notes = write(project / "build" / "notes" / "todo.txt", "mine")
    foreign = write(project / "build" / "cpython-398-x86_64-linux-gnu" / "data.bin", "not a build")
    clean_project(settings_of(project))
    assert notes.read_text() == "mine" and foreign.read_text() == "not a build"
    assert sorted(p.name for p in (project / "build").iterdir()) == ["cpython-398-x86_64-linux-gnu", "notes"]


def test_clean_with_a_shared_build_dir_leaves_other_folders(project: Path) -> None:
    with_build_dir(project, "build")
    claimed(project, project / "build")
    beside = claimed(project, project / "elsewhere" / OTHER)
    clean_project(settings_of(project))
    assert not (project / "build").exists() and carries_marker(beside)


def test_a_build_inside_an_earlier_buildkits_build_folder_says_so_once(project: Path, capsys) -> None:
    claimed(project, project / "build")
    capsys.readouterr()
    claim_build_folder(build_folder(project), project, settings_of(project).project_folders)
    said = squashed(capsys.readouterr().err)
    assert squashed(f"{project / 'build'} is a build folder of an earlier buildkit") in said, said
    assert squashed("`buildkit clean` removes it") in said
    claim_build_folder(build_folder(project), project, settings_of(project).project_folders)
    assert "earlier buildkit" not in capsys.readouterr().err


@pytest.mark.slow
def test_an_installed_file_written_over_is_installed_again(test_package, overlay_python: Path) -> None:
    """What another interpreter's develop does to the shared tree (lib/ has no interpreter in
    its name), done by hand: the next develop, no-op path included, puts its own file back."""
    project = test_package("minimal")
    develop = [overlay_python, "-m", "buildkit", "develop", project]  # it registers there, not in the runner's venv
    run(develop, env=clean_env())
    library = project / "minimal" / "lib" / "libminimal.so"
    built = library.read_bytes()  # as installed: CMake rewrites its rpath
    library.unlink()  # as CMake's install of another build folder does: a new file in its place
    library.write_bytes(built[:-64] + b"\0" * 64)
    done = run(develop, env=clean_env())
    output = done.stdout + done.stderr
    assert squashed(f"{library} was replaced since this build folder installed it") in squashed(output), output
    assert library.read_bytes() == built
    again = run(develop, env=clean_env())
    assert "replaced" not in again.stdout + again.stderr and "up to date" in again.stdout + again.stderr
