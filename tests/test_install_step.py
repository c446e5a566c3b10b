"""The install step copies only what changed, and the package tree always equals what a
fresh ``cmake --install`` of the same build writes (real cmake, ninja and g++), on
tests/packages/treeproj: one install rule of each kind."""

from __future__ import annotations

import os
import stat
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from buildkit.builder.driver import CMakeDriver
from buildkit.builder.install import summary as install_summary
from buildkit.builder.install import tree as install_tree
from buildkit.builder.install.script import read_units
from buildkit.builder.install.times import redate_second_cut_installs
from buildkit.builder.toolchain import tools as toolchain
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit_testing.paths import build_folder

pytestmark = pytest.mark.slow

OLD = 1_600_000_000 * 10**9  # a source date long before any install: never racy


@pytest.fixture(autouse=True)
def probe_cache(session_probe_cache):
    """Every test here probes tools: one cache for the session."""


@pytest.fixture
def project(tmp_path, test_package) -> Path:
    """tests/packages/treeproj, its sources dated OLD."""
    root = test_package("treeproj", tmp_path / "treeproj")
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(OLD, OLD))
    return root


def run(root: Path, **env: str):
    settings = load_settings(root, option_keys())
    options = load_options(settings, environ={"MAX_JOBS": "2", **env})
    return CMakeDriver(settings, options, install_prefix=root / "treeproj").run()


def tree(prefix: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(prefix)): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(prefix.rglob("*")) if p.is_file()}


def assert_like_fresh_install(root: Path, tmp_path: Path) -> None:
    """The package tree equals CMake's own install of the same build into an empty prefix."""
    fresh = tmp_path / f"fresh-{len(list(tmp_path.glob('fresh-*')))}"
    cmake = toolchain.find_cmake().path
    subprocess.run([str(cmake), "--install", str(build_folder(root)), "--prefix", str(fresh)], check=True,
                   capture_output=True)
    assert tree(root / "treeproj") == tree(fresh)


def test_edits_deletions_and_a_component_switched_off_match_a_fresh_install(project, tmp_path):
    first = run(project)
    assert first.installed
    assert_like_fresh_install(project, tmp_path)
    installed = project / "treeproj"
    assert not (installed / "share" / "docs" / "notes.txt").exists()  # the PATTERN rule holds
    assert not (installed / "data" / "manual.txt").exists()  # EXCLUDE_FROM_ALL

    (project / "include" / "tree" / "a.h").write_text("int tree_a(); // edited, longer\n")
    assert run(project).installed
    assert_like_fresh_install(project, tmp_path)

    (project / "include" / "tree" / "deep" / "c.h").unlink()
    assert run(project).installed
    assert not (installed / "include" / "tree" / "deep").exists()  # no empty folder left behind
    assert_like_fresh_install(project, tmp_path)

    (project / "docs" / "more.md").write_text("# more\n")
    (project / "docs" / "more.txt").write_text("not installed\n")
    assert run(project).installed
    assert (installed / "share" / "docs" / "more.md").is_file()
    assert_like_fresh_install(project, tmp_path)

    run(project, CMAKE_ARGS="-DWITH_EXTRAS=OFF")
    assert not (installed / "data" / "extra.txt").exists()
    assert_like_fresh_install(project, tmp_path)

    (project / "src" / "a.cpp").write_text("int tree_a() { return 2; }\n")
    rebuilt = run(project, CMAKE_ARGS="-DWITH_EXTRAS=OFF")
    assert rebuilt.steps > 0 and rebuilt.installed
    assert_like_fresh_install(project, tmp_path)


def test_an_unchanged_tree_is_not_touched_and_a_file_deleted_from_it_comes_back(project, tmp_path):
    run(project)
    installed = project / "treeproj"
    before = {p: p.stat().st_mtime_ns for p in installed.rglob("*") if p.is_file()}
    again = run(project)
    assert not again.installed and "install" not in again.timings
    assert {p: p.stat().st_mtime_ns for p in installed.rglob("*") if p.is_file()} == before
    (installed / "include" / "tree" / "b.h").unlink()
    assert run(project).installed
    assert_like_fresh_install(project, tmp_path)


def test_a_folder_of_another_rule_changed_still_installs_the_trees_edits(project, tmp_path):
    """The library deleted by hand changes lib/, which holds no header: the header rule is
    compared as stored, and its edit and the library both come back."""
    run(project)
    installed = project / "treeproj"
    (installed / "lib" / "libtree.so").unlink()
    (project / "include" / "tree" / "a.h").write_text("int tree_a(); // edited\n")
    assert run(project).installed
    assert_like_fresh_install(project, tmp_path)
    (installed / "include" / "tree" / "deep" / "c.h").unlink()
    (installed / "lib" / "libtree.so").unlink()
    assert run(project).installed
    assert_like_fresh_install(project, tmp_path)


def test_only_the_folders_a_tree_rule_installs_into_are_its_own():
    roots = [["include", "/src/include"], ["data/table.bin", "/src/data/table.bin"]]
    folders = {"/p/lib", "/p/include/tree", "/p", "/p/includes", "/p/data", "/p/data2", "/p/include"}
    assert install_tree.folders_within(folders, roots, "/p") == {"/p/include/tree", "/p", "/p/data", "/p/include"}
    assert install_tree.folders_within({"/p/lib"}, None, "/p") == {"/p/lib"}


def test_edits_within_the_same_second_are_all_installed(project):
    """The case CMake's one-second rule missed: quick edit, build, edit, build."""
    run(project)
    header = project / "include" / "tree" / "a.h"
    for round_ in range(6):
        text = f"int tree_a(); // v{round_}\n"  # the same size every time
        header.write_text(text)
        run(project)
        assert (project / "treeproj" / "include" / "tree" / "a.h").read_text() == text


def test_a_relinked_library_installed_within_the_second_gets_a_new_mtime(project):
    """CMake's rpath rewrite of an installed library puts back the times it read, cut to whole
    seconds; the install step dates the library when it was installed, to the nanosecond, so
    relinks within one second read as changes to whatever compares mtimes (a downstream build
    linking it), as content and inode time do."""
    run(project)
    built, installed = build_folder(project) / "libtree.so", project / "treeproj" / "lib" / "libtree.so"
    stamps = [installed.stat().st_mtime_ns]
    for round_ in range(4):  # well within a second each, on any machine that builds this quickly
        (project / "src" / "a.cpp").write_text(f"int tree_a() {{ return {round_ + 10}; }}\n")
        assert run(project).installed
        assert installed.read_bytes() != b"" and installed.stat().st_mtime_ns > built.stat().st_mtime_ns
        stamps.append(installed.stat().st_mtime_ns)
    assert stamps == sorted(set(stamps)), stamps  # five installs, five dates, each later
    assert all(stamp % 10**9 for stamp in stamps)


def test_only_an_mtime_cmake_cut_from_the_install_time_is_redated(tmp_path):
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    cut, fine, epoch, link = (prefix / name for name in ("cut.so", "fine.so", "epoch.so", "link.so"))
    for path in (cut, fine, epoch):
        path.write_bytes(b"x")
    started = time.time_ns()
    now_second = started // 10**9 * 10**9
    os.utime(cut, ns=(now_second, now_second))  # CMake's utime() after the rpath rewrite
    fine_ns = fine.stat().st_mtime_ns  # written now, not cut: left alone
    os.utime(epoch, ns=(OLD, OLD))  # a rule dating its files to SOURCE_DATE_EPOCH: left alone
    link.symlink_to(cut.name)
    redated = redate_second_cut_installs([str(cut), str(fine), str(epoch), str(link), str(prefix / "gone")],
                                         started)
    assert redated == [str(cut)]
    assert cut.stat().st_mtime_ns > now_second  # its ctime: when CMake last changed it
    assert fine.stat().st_mtime_ns == fine_ns and epoch.stat().st_mtime_ns == OLD


def test_an_mtime_that_cannot_be_set_is_named_and_the_install_goes_on(tmp_path, monkeypatch, capfd):
    installed = tmp_path / "prefix" / "lib.so"
    installed.parent.mkdir()
    installed.write_bytes(b"x")
    started = time.time_ns()
    os.utime(installed, ns=(started // 10**9 * 10**9,) * 2)

    def refuse(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "utime", refuse)
    assert redate_second_cut_installs([str(installed)], started) == []
    assert f"could not date {installed} to the nanosecond" in capfd.readouterr().err.replace("\n", " ")


def test_a_same_size_edit_with_its_mtime_put_back_is_installed(project):
    run(project)
    header = project / "include" / "tree" / "b.h"
    installed = project / "treeproj" / "include" / "tree" / "b.h"
    before = installed.stat().st_mtime_ns
    info = header.stat()
    header.write_text("int tree_B();\n")
    os.utime(header, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert header.stat().st_mtime_ns == OLD and header.stat().st_size == info.st_size
    assert run(project).installed
    # The copy is dated when it was made, never like its source: a staging that compares size
    # and mtime (a library wheel's) sees the new content.
    assert installed.read_text() == "int tree_B();\n" and installed.stat().st_mtime_ns > before


@pytest.mark.parametrize("verbose", ["0", "1"])
def test_a_build_that_only_rechecked_its_globs_installs_nothing(project, verbose):
    run(project)
    again = run(project, VERBOSE=verbose)
    log = (build_folder(project) / ".buildkit" / "logs" / "build.log").read_text()
    assert "VerifyGlobs" in log or "Re-checking globbed directories" in log  # the bookkeeping edge ran
    assert again.steps == 0 and not again.installed


def test_the_install_script_reads_as_one_unit_per_rule(project):
    run(project)
    units = read_units(build_folder(project) / "cmake_install.cmake").units
    trees = {unit.destination: unit for unit in units if unit.is_tree}
    assert set(trees) == {"include", "share", "data"} | set()  # data: table.bin and extra.txt
    assert [u.tree_type for u in units if u.is_tree].count("FILE") == 3  # table.bin, extra.txt, manual.txt
    assert not trees["share"].runs_with_component  # FILES_MATCHING only decides membership
    (code,) = [unit for unit in units if "code.txt" in unit.text]
    assert code.runs_with_component and not code.is_tree
    (manual,) = [unit for unit in units if unit.component == "manual"]
    assert not manual.active
    (target,) = [unit for unit in units if "TYPE SHARED_LIBRARY" in unit.text]
    assert not target.is_tree and any(path.endswith("libtree.so") for path in target.inputs)


def test_install_rules_run_with_their_own_cmake_code(project):
    """An install(CODE) rule runs whenever its component installs something."""
    run(project)
    code = project / "treeproj" / "code.txt"
    code.unlink()
    assert not run(project).installed  # nothing of its component changed: not run
    (project / "include" / "tree" / "b.h").write_text("int tree_b(); // edited\n")
    run(project)
    assert code.read_text() == "ran"


def test_partial_script_text_is_cmake_code(tmp_path):
    """The reader skips comments and bracket arguments the way CMake's lexer does."""
    script = tmp_path / "cmake_install.cmake"
    script.write_text(textwrap.dedent("""\
        # if( in a comment
        if(NOT DEFINED CMAKE_INSTALL_PREFIX)
          set(CMAKE_INSTALL_PREFIX "/usr/local")
        endif()
        if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
          file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/x" TYPE FILE FILES "/src/a(1).h" "/src/b.h")
        endif()
        if(CMAKE_INSTALL_COMPONENT STREQUAL "Unspecified" OR NOT CMAKE_INSTALL_COMPONENT)
          message([[endif() inside a bracket argument]])
        endif()
        string(REPLACE ";" "\\n" CMAKE_INSTALL_MANIFEST_CONTENT "${CMAKE_INSTALL_MANIFEST_FILES}")
        """))
    scripts = read_units(script)
    assert "CMAKE_INSTALL_PREFIX" in scripts.preamble
    first, second = scripts.units
    assert first.is_tree and first.sources == ["/src/a(1).h", "/src/b.h"] and first.destination == "x"
    assert not second.is_tree and second.runs_with_component


def test_a_racy_entry_is_compared_by_content(project, monkeypatch):
    """With file times too coarse to tell two edits apart (here: none at all), an entry
    recorded within the racy window is compared by content, so the edit still lands."""
    def size_only(info):
        return [info.st_size, 0, 0, "link" if stat.S_ISLNK(info.st_mode) else "file"]

    monkeypatch.setattr(install_summary, "fingerprint_of", size_only)
    monkeypatch.setattr(install_summary, "RACY_SLACK_NS", 10**20)  # every entry is racy
    run(project)
    header = project / "include" / "tree" / "b.h"
    header.write_text("int tree_X();\n")  # the same size as before
    assert run(project).installed
    assert (project / "treeproj" / "include" / "tree" / "b.h").read_text() == "int tree_X();\n"
    assert not run(project).installed  # compared again, equal: nothing to do


def installer(root: Path):
    settings = load_settings(root, option_keys())
    options = load_options(settings, environ={"MAX_JOBS": "2"})
    return CMakeDriver(settings, options, install_prefix=root / "treeproj").installer()


def test_a_check_made_while_the_build_ran_is_taken_over_only_while_it_holds(project, tmp_path, monkeypatch):
    """The no-op develop checks the trees while ninja builds, and the install after the
    build takes that check over: only when it was made from the same scans and the
    installed folders are as they were then.  An installed header deleted meanwhile is
    installed again."""
    run(project)
    time.sleep(2 * install_summary.RACY_SLACK_NS / 1e9)
    assert not run(project).installed  # verified: no racy entries left to compare
    step = installer(project)
    (summary,) = (build_folder(project) / ".buildkit").glob("install-*.summary")
    _, scans = install_summary.check(str(summary))
    planned = []
    original = type(step)._plan_tree
    monkeypatch.setattr(type(step), "_plan_tree", lambda *args: planned.append(args[1].key) or original(*args))

    early = step.check(scans)
    trees = len(planned)
    assert trees and step.check(scans, early).current and len(planned) == trees  # taken over as it was
    assert step.check({}, early).current and len(planned) == 2 * trees  # other scans: planned again
    early = step.check({})  # no summary to take scans from: the check scans for itself
    assert step.check(early.tree_scans(), early).current and len(planned) == 3 * trees  # and those are taken over

    early = step.check(scans)
    (project / "treeproj" / "include" / "tree" / "b.h").unlink()  # while "the build" runs
    assert step.install(scans=scans, early=early) is not None
    assert_like_fresh_install(project, tmp_path)


def summary_current(root: Path) -> bool:
    """The no-op develop's first-stage answer (buildkit.builder.install.summary)."""
    (summary,) = (build_folder(root) / ".buildkit").glob("install-*.summary")
    return install_summary.check(str(summary))[0]


def test_the_summary_says_current_only_when_nothing_is_to_install(project, monkeypatch):
    """The no-op develop trusts the summary without the install step's full check: after
    every kind of change it must say "not current", and once installed, "current".  Right
    after an install its folders' times are too recent to trust (the racy rule); the next
    build's full check verifies them, and from then on the summary answers."""
    def install() -> None:
        run(project)
        time.sleep(2 * install_summary.RACY_SLACK_NS / 1e9)  # what the install wrote is no longer racy
        assert not run(project).installed  # verifies it

    install()
    assert summary_current(project)
    header, library = project / "include" / "tree" / "b.h", build_folder(project) / "libtree.so"
    stamp = iter(range(OLD + 10**9, OLD + 100 * 10**9, 10**9))  # old times: never racy

    def edit(path: Path, text: str) -> None:
        path.write_text(text)
        os.utime(path, ns=(next(stamp),) * 2)

    def same_size_mtime_put_back() -> None:
        info = header.stat()
        header.write_text(header.read_text().upper())
        os.utime(header, ns=(info.st_atime_ns, info.st_mtime_ns))

    changes = {
        "an edited header": lambda: edit(project / "include" / "tree" / "a.h", "int tree_a(); // edited\n"),
        "a same-size edit, mtime put back": same_size_mtime_put_back,
        "a header added": lambda: edit(project / "include" / "tree" / "new.h", "int tree_new();\n"),
        "a header deleted": lambda: (project / "include" / "tree" / "deep" / "c.h").unlink(),
        "an installed file deleted": lambda: (project / "treeproj" / "include" / "tree" / "b.h").unlink(),
        "a target rule's input rebuilt": lambda: os.utime(library, ns=(next(stamp),) * 2),
        "a file installed by FILES edited": lambda: edit(project / "data" / "table.bin", "9" * 10000),
        "the install script regenerated": lambda: edit(build_folder(project) / "cmake_install.cmake",
                                                       (build_folder(project) / "cmake_install.cmake").read_text() + "#\n"),
    }
    for name, change in changes.items():
        change()
        assert not summary_current(project), name
        install()
        assert summary_current(project), name

    pending = next((build_folder(project) / ".buildkit").glob("install-pending-*"), None)
    assert pending is None  # an install finished leaves no marker; an unfinished one is never current:
    (marker,) = {p.with_name(p.name.replace(".summary", "")).with_name(
        "install-pending-" + p.stem.removeprefix("install-")) for p in (build_folder(project) / ".buildkit").glob("*.summary")}
    marker.touch()
    assert not summary_current(project)
    marker.unlink()
    assert summary_current(project)
    monkeypatch.setattr(install_summary, "RACY_SLACK_NS", 10**20)  # every recorded time too recent to trust
    assert not summary_current(project)
