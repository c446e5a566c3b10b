"""license_text: the project's license first, then headed third-party texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildkit.errors import BuildkitError
from buildkit.package.licenses import license_paths, license_text


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "LICENSE").write_text("Project license.\n")
    for name, text in (("foo", "Foo license.\r\nSecond line.\r\n"), ("bar", "\n\nBar license.")):
        (tmp_path / "third_party" / name).mkdir(parents=True)
        (tmp_path / "third_party" / name / "LICENSE").write_text(text, newline="")
    return tmp_path


def third_party(root: Path) -> list[Path]:
    return license_paths(root, ["third_party/foo/LICENSE", "third_party/bar/LICENSE"])


def test_project_license_then_each_third_party_with_a_header(root: Path) -> None:
    text = license_text(root / "LICENSE", third_party(root), root)
    assert text.startswith("Project license.\n")
    order = [text.index(s) for s in ("Project license.", "third_party/foo/LICENSE", "Foo license.",
                                     "third_party/bar/LICENSE", "Bar license.")]
    assert order == sorted(order)
    assert "\r" not in text and text.endswith("Bar license.\n")
    assert "Third-party license: third_party/foo/LICENSE" in text


def test_without_a_project_license_only_third_party_texts(root: Path) -> None:
    text = license_text(None, third_party(root), root)
    assert text.startswith("-" * 79 + "\nThird-party license: third_party/foo/LICENSE")
    assert "Project license" not in text


def test_repeated_entries_appear_once(root: Path) -> None:
    paths = [*third_party(root), root / "third_party" / "foo" / "LICENSE", root / "LICENSE"]
    text = license_text(root / "LICENSE", paths, root)
    assert text.count("Foo license.") == 1 and text.count("Project license.") == 1


def test_missing_file_names_it_and_the_setting(root: Path) -> None:
    with pytest.raises(BuildkitError) as caught:
        license_text(root / "LICENSE", [root / "third_party" / "gone" / "LICENSE"], root)
    message = str(caught.value)
    assert "third_party/gone/LICENSE" in message and "[tool.buildkit] licenses" in message
