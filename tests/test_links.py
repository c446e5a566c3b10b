"""The link check of what a wheel or sdist ships (buildkit.package.links), without a build."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from buildkit.errors import BuildkitError
from buildkit.package.layout import files_below
from buildkit.package.links import LinkGuard


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """A project with a file, and a folder outside it with a file."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "data.txt").write_text("ours")
    outside.mkdir()
    (outside / "secret.txt").write_text("theirs")
    return project, outside


def make_link(project: Path, outside: Path, case: str) -> Path:
    link = project / "pkg" / "link"
    if case == "inside":
        link.symlink_to("data.txt")
    elif case == "outside":
        link.symlink_to(outside / "secret.txt")
    elif case == "climbing out with ..":
        link.symlink_to(Path("..", "..", "outside", "secret.txt"))
    elif case == "chain ending outside":
        (project / "pkg" / "hop").symlink_to(outside / "secret.txt")
        link.symlink_to("hop")
    elif case == "folder outside":
        link.symlink_to(outside, target_is_directory=True)
    elif case == "dangling":
        link.symlink_to("missing.txt")
    elif case == "loop":
        (project / "pkg" / "other").symlink_to("link")
        link.symlink_to("other")
    return link


# (case, the phrases of the error; None when the link passes)
CASES = [
    ("inside", None),
    ("outside", ("pkg/link is a symbolic link to", "secret.txt", "outside the project",
                 'allow-outside-links = ["pkg/link"]')),
    ("climbing out with ..", ("pkg/link", "'../../outside/secret.txt'", "outside the project")),
    ("chain ending outside", ("pkg/link is a symbolic link to 'hop'", "secret.txt", "outside the project")),
    ("folder outside", ("pkg/link", "outside the project")),
    ("dangling", ("pkg/link is a dangling symbolic link", "'missing.txt'", "remove the link")),
    ("loop", ("pkg/link is a symbolic link to 'other' that never ends", "loops")),
]


@pytest.mark.parametrize("case, phrases", CASES, ids=[c[0] for c in CASES])
def test_a_link_passes_only_when_it_leads_inside(trees, case, phrases):
    project, outside = trees
    link = make_link(project, outside, case)
    guard = LinkGuard(project, [project])
    if phrases is None:
        guard.check_link(link)
        return
    with pytest.raises(BuildkitError) as info:
        guard.check_link(link)
    for phrase in phrases:
        assert phrase in str(info.value), (phrase, str(info.value))


def test_the_allow_setting_lets_a_named_outside_link_pass_but_never_a_dangling_one(trees):
    project, outside = trees
    link = make_link(project, outside, "outside")
    LinkGuard(project, [project], allowed=["pkg/link"]).check_link(link)
    with pytest.raises(BuildkitError, match="pkg/link is a symbolic link"):
        LinkGuard(project, [project], allowed=["pkg/other"]).check_link(link)
    link.unlink()
    link.symlink_to("missing.txt")
    with pytest.raises(BuildkitError, match="dangling"):
        LinkGuard(project, [project], allowed=["pkg/link"]).check_link(link)


def test_an_installed_link_may_lead_into_the_install_prefix(trees, tmp_path):
    """A staging tree outside the project: its links into itself are its own files."""
    project, _ = trees
    staging = tmp_path / "build" / "wheel-staging"
    (staging / "pkg" / "lib").mkdir(parents=True)
    (staging / "pkg" / "lib" / "libfoo.so.1").write_text("elf")
    (staging / "pkg" / "lib" / "libfoo.so").symlink_to(staging / "pkg" / "lib" / "libfoo.so.1")
    LinkGuard(staging, [project, staging]).check_link(staging / "pkg" / "lib" / "libfoo.so")
    with pytest.raises(BuildkitError, match="pkg/lib/libfoo.so is a symbolic link"):
        LinkGuard(staging, [project]).check_link(staging / "pkg" / "lib" / "libfoo.so")


def test_a_file_read_by_name_below_a_linked_folder_is_checked_too(trees):
    project, outside = trees
    (project / "docs").symlink_to(outside, target_is_directory=True)
    guard = LinkGuard(project, [project])
    guard.check_path(project / "pkg" / "data.txt")
    guard.check_path(project / "missing.md")  # absent: whoever reads it says so
    with pytest.raises(BuildkitError, match="docs/secret.txt is reached through a linked folder"):
        guard.check_path(project / "docs" / "secret.txt")


def test_listing_the_package_tree_checks_each_link(trees):
    project, outside = trees
    make_link(project, outside, "outside")
    with pytest.raises(BuildkitError, match="pkg/link is a symbolic link"):
        files_below(str(project / "pkg"), links=LinkGuard(project, [project]))
    assert sorted(files_below(str(project / "pkg"), links=LinkGuard(project, [project], ["pkg/link"]))) == [
        "data.txt", "link"]


def test_a_project_reached_through_a_linked_folder_still_contains_its_links(trees, tmp_path):
    project, _ = trees
    alias = tmp_path / "alias"
    alias.symlink_to(project, target_is_directory=True)
    (project / "pkg" / "link").symlink_to("data.txt")
    LinkGuard(alias, [alias]).check_link(alias / "pkg" / "link")
    assert os.path.islink(alias)
