"""build_py's recorded package-data listing (commands/build_py.py): reused while its
inputs are unchanged, made again, with the reason, when one changes, and equal to
setuptools' own listing every time; and `setup.py egg_info` end to end, whose manifest
reads that listing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from setuptools.command.build_py import build_py as setuptools_build_py

from buildkit.builder.build_state import PACKAGE_DATA_RECORD, state_path
from buildkit.frontends.setuptools.commands.build_py import BuildPy
from buildkit.frontends.setuptools.distribution import BuildkitDistribution
from buildkit.project import Project
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, setup_py
from buildkit_testing.projects import write_files

PYPROJECT = """\
[project]
name = "tiny"
version = "{version}"
requires-python = ">=3.11"

[tool.buildkit]
package = "pkg"

[[tool.buildkit.package-data]]
include = ["data/*.txt"]
"""
NAMED = ["lib/liba.so", "lib/libb.so", "include/a.h", "include/gone.h"]  # gone.h is not there at first


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_files(tmp_path / "tiny", {
        "pyproject.toml": PYPROJECT.format(version="1.0"),
        "setup.py": "from buildkit import setup\n\nsetup()\n",
        "pkg/__init__.py": "",
        "pkg/lib/liba.so": "a",
        "pkg/lib/libb.so": "b",
        "pkg/include/a.h": "int a;\n",
        "pkg/data/a.txt": "a\n",
    })
    monkeypatch.chdir(root)  # setuptools reads package folders relative to the working folder
    monkeypatch.setenv("VERBOSE", "1")
    return root


def listing(root: Path, package_data: dict, exclude: dict | None = None) -> tuple[list[str], list[str]]:
    """(BuildPy's listing of pkg, setuptools' own listing of the same command)."""
    distribution = BuildkitDistribution({"name": "tiny", "version": "1.0", "packages": ["pkg"],
                                         "package_data": package_data, "exclude_package_data": exclude or {},
                                         "cmdclass": {"build_py": BuildPy}}, project=Project.load(root))
    command = distribution.get_command_obj("build_py")
    command.ensure_finalized()
    [(_, _, _, ours)] = command.get_data_files_without_manifest()
    [(_, _, _, theirs)] = [setuptools_build_py._get_pkg_data_files(command, "pkg")]
    return ours, theirs


def said(capsys: pytest.CaptureFixture) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if "package data of pkg" in line]
    assert len(lines) == 1, lines
    return lines[0]


def test_an_unchanged_listing_is_reused_and_equals_setuptools_own(tiny, capsys):
    ours, theirs = listing(tiny, {"pkg": NAMED})
    assert ours == theirs == ["lib/liba.so", "lib/libb.so", "include/a.h"]
    assert said(capsys).endswith("listing package data of pkg: no earlier listing is recorded")
    assert Path(state_path(build_folder(tiny), PACKAGE_DATA_RECORD)).is_file()

    ours, theirs = listing(tiny, {"pkg": NAMED})
    assert ours == theirs
    assert said(capsys).endswith("package data of pkg: 3 files, as recorded (their patterns and the files "
                                 "those name are unchanged)")


@pytest.mark.parametrize(("change", "package_data", "exclude", "reason"), [
    ("create pkg/include/gone.h", {"pkg": NAMED}, None, "1 named file appeared or disappeared (pkg/include/gone.h "
                                                       "appeared)"),
    ("delete pkg/lib/libb.so", {"pkg": NAMED}, None, "1 named file appeared or disappeared (pkg/lib/libb.so "
                                                    "disappeared)"),
    ("", {"pkg": NAMED[:2]}, None, "its package_data patterns changed (6 -> 4)"),
    ("", {"pkg": NAMED, "": ["lib/*.so"]}, None, "its package_data patterns changed (6 -> 7)"),
    ("", {"pkg": NAMED}, {"pkg": ["*.h"]}, "its exclude_package_data changed"),
    ("create pkg/types.pyi", {"pkg": NAMED}, None, "the pattern 'pkg/*.pyi' matches other files now"),
    ("create pkg/py.typed", {"pkg": NAMED}, None, "1 named file appeared or disappeared (pkg/py.typed appeared)"),
])
def test_a_changed_input_lists_again_and_says_which(tiny, capsys, change, package_data, exclude, reason):
    listing(tiny, {"pkg": NAMED})
    capsys.readouterr()
    action, _, relative = change.partition(" ")
    if action == "create":
        (tiny / relative).write_text("x\n")
    elif action == "delete":
        (tiny / relative).unlink()
    ours, theirs = listing(tiny, package_data, exclude)
    assert ours == theirs
    assert said(capsys).endswith(f"listing package data of pkg: {reason}")
    # ... and the new listing is the one reused next time.
    again, _ = listing(tiny, package_data, exclude)
    assert again == theirs
    assert "as recorded" in said(capsys)


def test_unusual_patterns_are_read_as_setuptools_reads_them(tiny, capsys):
    """A trailing slash, a "." part and a double slash go through convert_path, as in setuptools."""
    odd = {"pkg": ["lib/./liba.so", "lib//libb.so", "include/a.h/", "lib/lib?.so"]}
    ours, theirs = listing(tiny, odd)
    assert ours == theirs and "pkg/lib/liba.so" not in ours and "lib/liba.so" in ours
    capsys.readouterr()
    (tiny / "pkg/include/a.h").unlink()
    ours, theirs = listing(tiny, odd)
    assert ours == theirs and "include/a.h" not in ours
    assert "(pkg/include/a.h disappeared)" in said(capsys)


def test_a_pattern_that_searches_folders_is_listed_by_setuptools_every_time(tiny, capsys):
    for _ in range(2):
        ours, theirs = listing(tiny, {"pkg": ["include/**/*.h", "lib/*.so"]})
        assert ours == theirs == ["include/a.h", "lib/liba.so", "lib/libb.so"]
        assert said(capsys).endswith("listing package data of pkg: the pattern 'pkg/include/**/*.h' searches "
                                     "folders, so its matches are not recorded")
    assert not Path(state_path(build_folder(tiny), PACKAGE_DATA_RECORD)).exists()


def sources(root: Path) -> list[str]:
    return (build_folder(root) / "egg-info/tiny.egg-info/SOURCES.txt").read_text().splitlines()


def listing_line(output: str) -> str:
    [line] = re.findall(r"^buildkit: (?:listing )?package data of pkg: .*$", output, re.M)
    return line


@pytest.mark.slow
def test_egg_info_reuses_the_listing_until_an_input_changes(tiny, overlay_python):
    """End to end through buildkit.setup(): the listing behind SOURCES.txt is reused by
    an unchanged second run, a new package-data file lists again, and a version change
    (not an input of the listing) rewrites the metadata without listing again."""

    def egg_info() -> str:
        done = setup_py(overlay_python, tiny, "egg_info", env=clean_env(VERBOSE="1"))
        return listing_line(done.stdout + done.stderr)

    assert egg_info().endswith("no earlier listing is recorded")
    assert "pkg/data/a.txt" in sources(tiny)
    assert "as recorded" in egg_info()

    (tiny / "pkg/data/b.txt").write_text("b\n")
    assert egg_info().endswith("its package_data patterns changed (6 -> 7)")
    assert "pkg/data/b.txt" in sources(tiny)

    (tiny / "pyproject.toml").write_text(PYPROJECT.format(version="2.0"))
    assert "as recorded" in egg_info()
    assert "Version: 2.0" in (build_folder(tiny) / "egg-info/tiny.egg-info/PKG-INFO").read_text()
