from __future__ import annotations

import os
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from buildkit.config.globs import glob_match, glob_match_any
from buildkit.config.modes import WheelMode
from buildkit.config.settings import PackageDataEntry
from buildkit.errors import BuildkitError, ConfigError
from buildkit.package.layout import (
    PackageDataRule,
    collect_package_data,
    default_rules,
    files_below,
    library_only_layout,
    mode_ext_modules,
    mode_packages,
    report_unmatched,
    rules_from_config,
)
from buildkit.package.links import LinkGuard
from buildkit_testing.paths import REPO
from buildkit_testing.processes import run
from buildkit_testing.projects import write_files

FULL, LIB, PY = WheelMode.FULL, WheelMode.LIBRARY_ONLY, WheelMode.PYTHON_ONLY

TREE = ("__init__.py", "_C.pyi", "lib/libfoo.so.1", "lib/libfoo_python.so", "include/foo/a.h",
        "include/foo/detail/b.hpp", "include/kineto/k.h", "share/cmake/Foo/FooConfig.cmake", "bin/tool",
        "__pycache__/__init__.cpython-311.pyc", "notes.md")
HEADERS = ["include/foo/a.h", "include/foo/detail/b.hpp", "include/kineto/k.h"]
COMMON = ["_C.pyi", "bin/tool", *HEADERS, "share/cmake/Foo/FooConfig.cmake"]


class FakeCache:
    def __init__(self, **values: bool):
        self.values = values

    def get_bool(self, name: str) -> bool:
        return self.values[name]  # KeyError for a missing entry, like CMakeCache


def make_tree(root: Path) -> Path:
    """TREE, each file holding its own path, and the library's development symlink."""
    write_files(root, {rel: rel for rel in TREE})
    (root / "lib/libfoo.so").symlink_to("libfoo.so.1")
    return root


@pytest.fixture
def pkg(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "foo")


def inside(folder: Path) -> LinkGuard:
    """Links below ``folder`` must stay inside it."""
    return LinkGuard(folder, [folder])


def files(pkg: Path, rules, mode: WheelMode = FULL, cache=None) -> list[str]:
    return collect_package_data(pkg, rules, mode, cache if cache is not None else FakeCache(), links=inside(pkg)).files


# --- globs -------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, path, hit", [
    ("include/**/*.h", "include/a.h", True),
    ("include/**/*.h", "include/x/y/a.h", True),
    ("include/**/*.h", "include/x/a.hpp", False),
    ("include/*.h", "include/x/a.h", False),
    ("**/*.pyi", "_C.pyi", True),
    ("**/*.pyi", "a/b/_C.pyi", True),
    ("bin/*", "bin/x/tool", False),
    ("gen/**", "gen/a/b.yaml", True),
    ("lib/lib?.so", "lib/libx.so", True),
    ("lib/[!x]*.so", "lib/x.so", False),
])
def test_glob_semantics(pattern: str, path: str, hit: bool) -> None:
    assert glob_match(pattern, path) is hit


@pytest.mark.parametrize("pattern", ["/abs/*.h", "../x", "include/**.h", "a//b"])
def test_bad_patterns(pattern: str) -> None:
    with pytest.raises(ConfigError):
        PackageDataRule((pattern,))


# --- default rules per mode --------------------------------------------------------

def test_full_mode(pkg: Path) -> None:
    assert files(pkg, default_rules()) == sorted(
        COMMON + ["lib/libfoo.so", "lib/libfoo.so.1", "lib/libfoo_python.so"])


def test_library_only_mode_leaves_out_python_bindings(pkg: Path) -> None:
    assert files(pkg, default_rules(), LIB) == sorted(COMMON + ["lib/libfoo.so", "lib/libfoo.so.1"])


def test_python_only_mode_leaves_out_native_libraries(pkg: Path) -> None:
    assert files(pkg, default_rules(), PY) == sorted(COMMON + ["lib/libfoo_python.so"])


def test_codegen_package_only_outside_library_only(pkg: Path) -> None:
    (pkg / "_gen/templates").mkdir(parents=True)
    (pkg / "_gen/templates/Ops.h.in").write_text("x")
    (pkg / "_gen/__pycache__").mkdir()
    (pkg / "_gen/__pycache__/gen.pyc").write_text("x")
    rules = default_rules(codegen_package="_gen")
    assert rules == default_rules(codegen_package="foo._gen", package="foo")
    assert "_gen/templates/Ops.h.in" in files(pkg, rules, PY)
    assert "_gen/__pycache__/gen.pyc" not in files(pkg, rules, PY)
    assert not [f for f in files(pkg, rules, LIB) if f.startswith("_gen/")]


# --- when, exclude, unmatched ------------------------------------------------------

KINETO = (PackageDataRule(("include/foo/**",)), PackageDataRule(("include/kineto/*.h",), when="USE_KINETO"))


@pytest.mark.parametrize("cache, has_kineto", [(FakeCache(USE_KINETO=True), True),
                                               (FakeCache(USE_KINETO=False), False),
                                               (FakeCache(), False)])
def test_when_condition(pkg: Path, cache: FakeCache, has_kineto: bool) -> None:
    assert ("include/kineto/k.h" in files(pkg, KINETO, FULL, cache)) is has_kineto


@pytest.mark.parametrize("when, values, active", [
    ("not USE_KINETO", {}, True),
    ("not USE_KINETO", {"USE_KINETO": True}, False),
    ("USE_A and not USE_B", {"USE_A": True, "USE_B": False}, True),
    ("USE_A and USE_B", {"USE_A": True}, False),
    ("USE_A or USE_B", {"USE_B": True}, True),
    ("USE_A and USE_B or USE_C", {"USE_C": True}, True),
    ("nothing", {"nothing": True}, True),  # a name starting with "not" is not a negation
    ("not nothing", {"nothing": True}, False),
])
def test_condition_forms(when: str, values: dict[str, bool], active: bool) -> None:
    assert PackageDataRule(("x",), when=when).active(FULL, FakeCache(**values)) is active


@pytest.mark.parametrize("when", ["USE_A and", "not", "USE-A", "USE_A not USE_B", "or USE_A", "",
                                  "not not USE_A", "USE_A and or USE_B"])
def test_bad_conditions(when: str) -> None:
    with pytest.raises(ConfigError, match="condition"):
        PackageDataRule(("x",), when=when)


def test_no_cache_means_every_condition_is_off(pkg: Path) -> None:
    assert "include/kineto/k.h" not in collect_package_data(pkg, KINETO, FULL, None, links=inside(pkg)).files


def test_exclusions(pkg: Path) -> None:
    rules = (PackageDataRule(("include/**/*.h", "include/**/*.hpp"), exclude=("include/foo/detail/**",)),
             PackageDataRule((), exclude=("**/k.h",)))
    assert files(pkg, rules) == ["include/foo/a.h"]


def test_exclude_of_one_rule_does_not_hide_another_rules_files(pkg: Path) -> None:
    rules = (PackageDataRule(("include/**",), exclude=("**/a.h",)), PackageDataRule(("include/foo/a.h",)))
    assert "include/foo/a.h" in files(pkg, rules)


def test_unmatched_rules_are_reported(pkg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = (*default_rules(),
             PackageDataRule(("lib/*.dylib",), modes=frozenset({FULL})),
             PackageDataRule(("share/doc/**",), when="BUILD_DOCS"),  # inactive: not reported
             PackageDataRule(("include/**/*.inc",), when="USE_X"))
    result = collect_package_data(pkg, rules, FULL, FakeCache(USE_X=True), links=inside(pkg))
    assert [r.include for r in result.unmatched] == [("lib/*.dylib",), ("include/**/*.inc",)]
    assert report_unmatched(result) is True
    err = " ".join(capsys.readouterr().err.split())
    assert "2 package-data rule(s) matched no files" in err
    assert "lib/*.dylib" in err and "include/**/*.inc" in err and "when: USE_X" in err
    assert "share/doc" not in err


def test_nothing_to_report(pkg: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert report_unmatched(collect_package_data(pkg, default_rules(), PY, FakeCache(), links=inside(pkg))) is False
    assert capsys.readouterr().err == ""


def test_missing_package_dir(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        collect_package_data(tmp_path / "nope", default_rules(), FULL, None, links=inside(tmp_path))


# --- config ------------------------------------------------------------------------

def test_rules_from_config() -> None:
    """The settings reader checks the [[tool.buildkit.package-data]] entries (tests/test_settings_errors.py);
    the rules take the typed entries as they are."""
    rules = rules_from_config([
        PackageDataEntry(("lib/*.so*",)),
        PackageDataEntry(("include/**/*.h",), exclude=("include/internal/**",), modes=frozenset({FULL, LIB}),
                         when="USE_X and not USE_Y"),
    ])
    assert rules[0] == PackageDataRule(("lib/*.so*",))
    assert rules[1].exclude == ("include/internal/**",)
    assert rules[1].modes == frozenset({FULL, LIB})
    assert rules[1].active(LIB, FakeCache(USE_X=True)) and not rules[1].active(PY, FakeCache(USE_X=True))


# --- mode effects ------------------------------------------------------------------

def test_mode_packages() -> None:
    packages = ["foo", "foo.nn", "foolish", "libfoo"]
    assert mode_packages(packages, "foo", FULL) == packages
    assert mode_packages(packages, "foo", PY) == packages
    assert mode_packages(packages, "foo", LIB) == ["foolish", "libfoo"]


def test_mode_ext_modules() -> None:
    assert mode_ext_modules(["ext"], FULL) == ["ext"] == mode_ext_modules(["ext"], PY)
    assert mode_ext_modules(["ext"], LIB) == []


def test_library_only_layout_stages_its_own_package(pkg: Path, tmp_path: Path) -> None:
    stage = tmp_path / "stage"
    (stage / "libfoo/stale.txt").parent.mkdir(parents=True)
    (stage / "libfoo/stale.txt").write_text("from an earlier build")
    chosen = files(pkg, default_rules(), LIB)
    layout = library_only_layout(chosen, pkg, stage, "libfoo")
    assert layout.packages == ["libfoo"]
    assert layout.package_dir == {"libfoo": (stage / "libfoo").as_posix()}
    assert layout.package_data == {"libfoo": chosen}
    assert (stage / "libfoo/lib/libfoo.so").is_symlink()
    assert not (stage / "libfoo/stale.txt").exists()
    assert (stage / "libfoo/__init__.py").is_file()
    with pytest.raises(ConfigError, match="not a valid package name"):
        library_only_layout(chosen, pkg, stage, "lib-foo")


def test_library_only_layout_without_files_yet(pkg: Path, tmp_path: Path) -> None:
    """Metadata hooks run before anything is built: an empty, importable package."""
    layout = library_only_layout([], pkg, tmp_path / "never-made", "libfoo")
    assert layout.package_data == {"libfoo": []}
    assert [p.name for p in (tmp_path / "never-made" / "libfoo").iterdir()] == ["__init__.py"]


# --- a real wheel --------------------------------------------------------------------

SETUP_PY = textwrap.dedent("""
    import os
    from pathlib import Path

    from setuptools import setup

    from buildkit.config.modes import WheelMode
    from buildkit.config.settings import PackageDataEntry
    from buildkit.package.layout import (collect_package_data, default_rules, library_only_layout,
                                         mode_packages, rules_from_config)
    from buildkit.package.links import LinkGuard

    class Cache:
        def get_bool(self, name):
            return {"USE_EXTRA": True}[name]

    here = Path(__file__).parent
    mode = WheelMode(os.environ["TEST_WHEEL_MODE"])
    rules = default_rules() + rules_from_config(
        [PackageDataEntry(("extra/*.txt",), exclude=("extra/skip*",), when="USE_EXTRA")])
    data = collect_package_data(here / "foo", rules, mode, Cache(), links=LinkGuard(here, [here])).files
    packages = mode_packages(["foo", "foo.sub"], "foo", mode)
    if mode is WheelMode.LIBRARY_ONLY:
        layout = library_only_layout(data, here / "foo", here / "build" / "staging", "libfoo")
        setup(name="libfoo", version="1.0", packages=packages + layout.packages,
              package_dir=layout.package_dir, package_data=layout.package_data)
    else:
        setup(name="foo", version="1.0", packages=packages, package_data={"foo": data})
""")


def pep517_wheel_names(project: Path, mode: WheelMode) -> set[str]:
    """The files (not the dist-info) of the wheel setuptools' PEP 517 hook builds in ``mode``."""
    env = {**os.environ, "TEST_WHEEL_MODE": mode.value,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    code = "import setuptools.build_meta as b; print(b.build_wheel('dist'))"
    done = run([sys.executable, "-c", code], cwd=project, env=env, timeout=300)
    wheel = project / "dist" / done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        return {n for n in archive.namelist() if ".dist-info/" not in n}


@pytest.fixture
def wheel_project(tmp_path: Path) -> Path:
    make_tree(tmp_path / "foo")
    write_files(tmp_path / "foo", {rel: rel for rel in ("sub/__init__.py", "extra/a.txt", "extra/skip.txt")})
    (tmp_path / "setup.py").write_text(SETUP_PY)
    return tmp_path


def test_real_wheel_full(wheel_project: Path) -> None:
    names = pep517_wheel_names(wheel_project, FULL)
    expected = {"__init__.py", "sub/__init__.py", "extra/a.txt", "lib/libfoo.so", "lib/libfoo.so.1",
                "lib/libfoo_python.so", *COMMON}
    assert names == {f"foo/{rel}" for rel in expected}


def test_real_wheel_library_only(wheel_project: Path) -> None:
    names = pep517_wheel_names(wheel_project, LIB)
    expected = {"__init__.py", "extra/a.txt", "lib/libfoo.so", "lib/libfoo.so.1", *COMMON}
    assert names == {f"libfoo/{rel}" for rel in expected}


def test_library_staging_copies_only_what_changed(tmp_path):
    """Every setup() call stages a library-only wheel's files: an unchanged file is not
    copied again, a changed one is, and one no longer installed goes."""
    source, staging = tmp_path / "tree", tmp_path / "staging"
    for rel, text in {"lib/libx.so": "x", "include/x.h": "int x();", "include/old.h": "old"}.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text)
    library_only_layout(["lib/libx.so", "include/x.h", "include/old.h"], source, staging, "libx")
    staged = staging / "libx"
    inodes = {rel: (staged / rel).stat().st_ino for rel in ("lib/libx.so", "include/x.h")}
    (source / "include" / "x.h").write_text("int x(int);")
    library_only_layout(["lib/libx.so", "include/x.h"], source, staging, "libx")
    assert (staged / "lib" / "libx.so").stat().st_ino == inodes["lib/libx.so"]  # not copied again
    assert (staged / "include" / "x.h").read_text() == "int x(int);"
    assert not (staged / "include" / "old.h").exists()
    assert sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file()) == [
        "__init__.py", "include/x.h", "lib/libx.so"]


SEGMENT_CASES = [
    ("include/**", "include", True), ("include/**", "include/a/b.h", True), ("include/**", "includes/a", False),
    ("**/*.h", "a.h", True), ("**/*.h", "x/y/a.h", True), ("a/**/**", "a", True), ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True), ("*.h", "x/a.h", False), ("[!a]*", "b", True), ("[!a]*", "a", False),
    ("[^a]", "^", True), ("[^a]", "b", False), ("x[+-0]", "x/", False), ("lib?.so", "libx.so", True),
    ("lib?.so", "lib/.so", False), ("[]a]", "]", True), ("a[", "a[", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), SEGMENT_CASES)
def test_glob_segments_match_as_fnmatch_within_a_segment(pattern, path, expected):
    assert glob_match(pattern, path) is expected


def test_matching_any_of_several_patterns_is_matching_one_of_them():
    """A rule's patterns are matched as one expression: every subset of the patterns above
    must say what matching them one by one says, on every path above."""
    patterns = sorted({pattern for pattern, _, _ in SEGMENT_CASES})
    paths = sorted({path for _, path, _ in SEGMENT_CASES} | {"include/x/y/a.h", "lib/libx.so", "bin/x/tool"})
    hits = 0
    for size in (1, 2, 3, len(patterns)):
        for start in range(len(patterns)):
            chosen = (patterns * 2)[start:start + size]
            for path in paths:
                expected = any(glob_match(p, path) for p in chosen)
                assert glob_match_any(chosen, path) is expected, (chosen, path)
                hits += expected
    assert hits and not glob_match_any([], "a")


def test_files_below_lists_files_and_file_links_but_enters_no_linked_folder(tmp_path):
    """What os.walk with an isfile check per name lists, the faster listing lists too."""
    root = tmp_path / "pkg"
    for rel in ("a.h", "include/x/y.h", "lib/libfoo.so.1", "share/z.cmake"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "lib/libfoo.so").symlink_to("libfoo.so.1")
    (root / "linked").symlink_to(root / "include", target_is_directory=True)
    (root / "empty").mkdir()
    top = str(root)
    walked = sorted(os.path.relpath(os.path.join(d, n), top).replace(os.sep, "/")
                    for d, _, names in os.walk(top) for n in names if os.path.isfile(os.path.join(d, n)))
    assert sorted(files_below(top, links=inside(root))) == walked == [
        "a.h", "include/x/y.h", "lib/libfoo.so", "lib/libfoo.so.1", "share/z.cmake"]


def test_a_folder_that_cannot_be_listed_stops_the_collection(tmp_path, monkeypatch):
    """os.walk would skip it and the wheel would lack its files without a word."""
    (tmp_path / "pkg" / "include" / "hidden").mkdir(parents=True)
    (tmp_path / "pkg" / "include" / "hidden" / "x.h").write_text("")
    real_scandir = os.scandir

    def scandir(path):
        if str(path).endswith("hidden"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(BuildkitError, match="Could not list .*hidden.*Permission denied"):
        files_below(str(tmp_path / "pkg"), links=inside(tmp_path))
