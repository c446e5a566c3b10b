"""concatenate_licenses: the project's license first, then headed third-party texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildkit.errors import BuildkitError
from buildkit.package.licenses import concatenate_licenses, license_paths
from buildkit_testing.paths import build_folder


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
    out = concatenate_licenses(root / "LICENSE", third_party(root), build_folder(root) / "LICENSE")
    text = out.read_text(encoding="utf-8")
    assert text.startswith("Project license.\n")
    order = [text.index(s) for s in ("Project license.", "third_party/foo/LICENSE", "Foo license.",
                                     "third_party/bar/LICENSE", "Bar license.")]
    assert order == sorted(order)
    assert "\r" not in text and text.endswith("Bar license.\n")
    assert "Third-party license: third_party/foo/LICENSE" in text


def test_output_is_deterministic_and_written_whole(root: Path) -> None:
    one = concatenate_licenses(root / "LICENSE", third_party(root), root / "a" / "LICENSE").read_bytes()
    two = concatenate_licenses(root / "LICENSE", third_party(root), root / "b" / "LICENSE").read_bytes()
    assert one == two
    assert sorted(p.name for p in (root / "a").iterdir()) == ["LICENSE"]  # no temp file left


def test_without_a_project_license_only_third_party_texts(root: Path) -> None:
    text = concatenate_licenses(None, third_party(root), root / "out", root=root).read_text()
    assert text.startswith("-" * 79 + "\nThird-party license: third_party/foo/LICENSE")
    assert "Project license" not in text


def test_repeated_entries_appear_once(root: Path) -> None:
    paths = [*third_party(root), root / "third_party" / "foo" / "LICENSE", root / "LICENSE"]
    text = concatenate_licenses(root / "LICENSE", paths, root / "out").read_text()
    assert text.count("Foo license.") == 1 and text.count("Project license.") == 1


def test_missing_file_names_it_and_the_setting(root: Path) -> None:
    with pytest.raises(BuildkitError) as caught:
        concatenate_licenses(root / "LICENSE", [root / "third_party" / "gone" / "LICENSE"], root / "out")
    message = str(caught.value)
    assert "third_party/gone/LICENSE" in message and "[tool.buildkit] licenses" in message
    assert not (root / "out").exists()
