from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import pytest

from buildkit.errors import ConfigError
from buildkit.package.version import ResolvedVersion, render_version_file, resolve_version, write_version_file
from buildkit_testing.git import commit_all, needs_git
from buildkit_testing.paths import REPO

NO_GIT = "/nonexistent/git"  # a git that cannot run, so the host's checkout never leaks in


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "version.txt").write_text("1.2.0a0\n")
    return tmp_path


# --- sources and precedence --------------------------------------------------------

def test_version_txt_stays_as_written(project: Path) -> None:
    resolved = resolve_version(project, git=NO_GIT)
    assert resolved == ResolvedVersion("1.2.0a0", None, "version.txt")


def test_version_txt_whitespace_is_stripped(project: Path) -> None:
    (project / "version.txt").write_text("  3.0.1 \n\n")
    assert resolve_version(project, git=NO_GIT).version == "3.0.1"


def test_version_file_name_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "VERSION").write_text("0.4.0\n")
    assert resolve_version(tmp_path, version_file="VERSION", git=NO_GIT) == ResolvedVersion("0.4.0", None, "VERSION")


def test_not_a_git_repo_gets_no_suffix(project: Path) -> None:
    assert resolve_version(project).version == "1.2.0a0"


@needs_git
def test_git_checkout_appends_short_sha(project: Path) -> None:
    sha = commit_all(project)
    resolved = resolve_version(project)
    assert resolved.version == f"1.2.0a0+git{sha[:7]}"
    assert resolved.git_sha == sha
    assert resolved.source == "version.txt"


@needs_git
def test_git_label_joins_an_existing_local_label(project: Path) -> None:
    (project / "version.txt").write_text("1.0+cu121\n")
    sha = commit_all(project)
    assert resolve_version(project).version == f"1.0+cu121.git{sha[:7]}"


def test_build_version_wins(project: Path) -> None:
    (project / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: foo\nVersion: 9.9.9\n")
    resolved = resolve_version(project, build_version=" 2.1.0 ", build_version_var="FOO_BUILD_VERSION",
                               git=NO_GIT)
    assert resolved == ResolvedVersion("2.1.0", None, "FOO_BUILD_VERSION")


def test_empty_build_version_is_ignored(project: Path) -> None:
    assert resolve_version(project, build_version="", git=NO_GIT).source == "version.txt"


@pytest.mark.parametrize("number, expected", [(None, "2.1.0"), (0, "2.1.0"), (1, "2.1.0"),
                                              (2, "2.1.0.post2"), (13, "2.1.0.post13")])
def test_build_number_adds_post_release_above_one(project: Path, number: int | None, expected: str) -> None:
    resolved = resolve_version(project, build_version="2.1.0", build_number=number, git=NO_GIT)
    assert resolved.version == expected


def test_build_number_goes_before_local_label(project: Path) -> None:
    resolved = resolve_version(project, build_version="2.1.0+cu121", build_number=3, git=NO_GIT)
    assert resolved.version == "2.1.0.post3+cu121"


def test_negative_build_number_is_rejected(project: Path) -> None:
    with pytest.raises(ConfigError, match="negative"):
        resolve_version(project, build_version="2.1.0", build_number=-1, git=NO_GIT)


def test_build_number_ignored_without_build_version(project: Path) -> None:
    assert resolve_version(project, build_number=5, git=NO_GIT).version == "1.2.0a0"


@needs_git
def test_sdist_pkg_info_beats_version_txt_and_git(project: Path) -> None:
    commit_all(project)
    (project / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: foo\nVersion: 1.2.0a0+gitabcdef1\n"
                                      "Summary: x\n\nlong description\nVersion: 0.0.0\n")
    resolved = resolve_version(project)
    assert resolved == ResolvedVersion("1.2.0a0+gitabcdef1", None, "PKG-INFO")


def test_pkg_info_without_version_is_an_error(project: Path) -> None:
    (project / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: foo\n")
    with pytest.raises(ConfigError, match="no Version header"):
        resolve_version(project, git=NO_GIT)


# --- invalid versions --------------------------------------------------------------

def test_invalid_build_version_names_the_variable(project: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_version(project, build_version="not-a-version", build_version_var="FOO_BUILD_VERSION")
    assert "FOO_BUILD_VERSION" in str(info.value) and "'not-a-version'" in str(info.value)


def test_invalid_version_txt_names_the_file(project: Path) -> None:
    (project / "version.txt").write_text("v1 beta\n")
    with pytest.raises(ConfigError) as info:
        resolve_version(project, git=NO_GIT)
    assert "version.txt" in str(info.value) and "'v1 beta'" in str(info.value)


def test_invalid_pkg_info_version_names_the_file(project: Path) -> None:
    (project / "PKG-INFO").write_text("Metadata-Version: 2.1\nVersion: banana\n")
    with pytest.raises(ConfigError) as info:
        resolve_version(project, git=NO_GIT)
    assert "PKG-INFO" in str(info.value) and "'banana'" in str(info.value)


def test_post_release_on_a_post_release_is_invalid(project: Path) -> None:
    with pytest.raises(ConfigError, match="BUILDKIT_RELEASE_VERSION is '1.0.post1', already a post-release"):
        resolve_version(project, build_version="1.0.post1", build_number=2, git=NO_GIT)


def test_missing_version_txt_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_version(tmp_path, build_version_var="FOO_BUILD_VERSION", git=NO_GIT)
    assert "version.txt" in str(info.value) and "FOO_BUILD_VERSION" in str(info.value)


def test_empty_version_txt(project: Path) -> None:
    (project / "version.txt").write_text("\n")
    with pytest.raises(ConfigError, match="empty"):
        resolve_version(project, git=NO_GIT)


# --- version.py --------------------------------------------------------------------

def import_file(path: Path):
    spec = importlib.util.spec_from_file_location("generated_version", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_file_is_importable_with_values(tmp_path: Path) -> None:
    resolved = ResolvedVersion("1.2.0a0+gitabc1234", "abc1234" + "0" * 33, "version.txt")
    extra = {"cuda": "12.1", "debug": False, "hip": None, "archs": ["sm_80", "sm_90"]}
    assert write_version_file(tmp_path, resolved, extra) is True
    module = import_file(tmp_path / "version.py")
    assert module.__version__ == "1.2.0a0+gitabc1234"
    assert module.git_version == resolved.git_sha
    assert (module.cuda, module.debug, module.hip, module.archs) == ("12.1", False, None, ["sm_80", "sm_90"])
    assert module.__all__ == ["__version__", "git_version", "cuda", "debug", "hip", "archs"]
    assert oct((tmp_path / "version.py").stat().st_mode & 0o777) == oct(0o644)
    # No temporary file left behind (the import may have written __pycache__).
    assert not [p for p in tmp_path.iterdir() if p.name not in {"version.py", "__pycache__"}]


def test_strings_needing_escapes_survive(tmp_path: Path) -> None:
    write_version_file(tmp_path, ResolvedVersion("1.0", None, "x"), {"note": "it's \"quoted\"\n$x"})
    module = import_file(tmp_path / "version.py")
    assert module.note == "it's \"quoted\"\n$x" and module.git_version is None


def test_written_only_when_content_changes(tmp_path: Path) -> None:
    resolved = ResolvedVersion("1.0", None, "version.txt")
    target = tmp_path / "version.py"
    assert write_version_file(tmp_path, resolved, {"cuda": None})
    old = time.time() - 100
    os.utime(target, (old, old))
    assert write_version_file(tmp_path, resolved, {"cuda": None}) is False
    assert target.stat().st_mtime == old
    assert write_version_file(tmp_path, resolved, {"cuda": "12.1"}) is True
    assert target.stat().st_mtime != old


def test_custom_template_with_named_placeholders(tmp_path: Path) -> None:
    template = tmp_path / "custom.py.in"
    template.write_text("VERSION = $version\nCUDA = $cuda\nPRICE = '$$5'\n")
    write_version_file(tmp_path, ResolvedVersion("2.0", None, "x"), {"cuda": "11.8"}, template=template)
    marker, *body = (tmp_path / "version.py").read_text().splitlines(keepends=True)
    assert marker.startswith("# Generated by buildkit from a custom version.py template")
    assert "".join(body) == "VERSION = '2.0'\nCUDA = '11.8'\nPRICE = '$5'\n"
    # Marked, so the next build may rewrite it.
    assert write_version_file(tmp_path, ResolvedVersion("2.1", None, "x"), {"cuda": "11.8"}, template=template)


def test_template_placeholder_without_value(tmp_path: Path) -> None:
    template = tmp_path / "custom.py.in"
    template.write_text("CUDA = $cuda\n")
    with pytest.raises(ConfigError, match=r"\$cuda"):
        write_version_file(tmp_path, ResolvedVersion("2.0", None, "x"), template=template)


@pytest.mark.parametrize("name", ["class", "git_version", "__version__", "not-ident"])
def test_bad_extra_field_names(name: str) -> None:
    with pytest.raises(ConfigError, match="cannot be a field"):
        render_version_file(ResolvedVersion("1.0", None, "x"), {name: 1})


def test_values_that_are_not_literals_are_rejected() -> None:
    with pytest.raises(ConfigError, match="Python literal"):
        render_version_file(ResolvedVersion("1.0", None, "x"), {"path": Path("/x")})


def test_shipped_template_is_the_repo_template() -> None:
    text = render_version_file(ResolvedVersion("1.0", "f" * 40, "x"))
    shipped = (REPO / "templates" / "version.py.in").read_text()
    assert text.splitlines()[0] == shipped.splitlines()[0]
    compile(text, "version.py", "exec")


@pytest.mark.parametrize("make, message", [
    (lambda path: path.mkdir(), "Cannot read the project version from"),
    (lambda path: path.write_bytes(b"1.0.0\n" * 900_000), "is over 1024 bytes long: it is no version file"),
    (lambda path: path.write_bytes(b"\xff\xfe1.0"), "is not UTF-8 text"),
])
def test_a_version_file_that_is_no_version_file_is_named(tmp_path: Path, make, message: str) -> None:
    make(tmp_path / "version.txt")
    with pytest.raises(ConfigError, match=message) as refused:
        resolve_version(tmp_path)
    assert len(str(refused.value)) < 600, "the error must not repeat the file's content"
