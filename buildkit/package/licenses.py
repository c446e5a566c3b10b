"""One license text for a wheel: the project's license followed by third-party ones.

A wheel that bundles vendored C++ libraries must ship their license texts too.
``[tool.buildkit] licenses`` lists them; :func:`license_text` makes the combined
text, which :func:`bundle_licenses` writes in place of the project's license inside
the wheel's ``.dist-info`` (the source tree's LICENSE is never rewritten).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from buildkit._util import console
from buildkit.errors import ConfigError

SETTINGS_KEY = "licenses"
_RULE = "-" * 79
PROJECT_LICENSE = re.compile(r"(LICEN[CS]E|COPYING)", re.IGNORECASE)


def license_paths(root: Path, entries: Sequence[str]) -> list[Path]:
    """The ``[tool.buildkit] licenses`` entries as paths under the project root."""
    return [root / entry for entry in entries]


def _display_name(path: Path, root: Path) -> str:
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:  # another drive on Windows: no relative form exists
        return path.as_posix()


def _read(path: Path, root: Path) -> str:
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise ConfigError(
            f"License file {_display_name(path, root)} does not exist (looked for {path}).",
            f"It is listed in [tool.buildkit] {SETTINGS_KEY} in pyproject.toml or is the project's own "
            "license; fix the path or remove the entry.") from None
    # Some vendored licenses are Latin-1; replacing undecodable bytes keeps the
    # output deterministic instead of failing the build over an accent.
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    return text.strip("\n") + "\n"


def license_text(project_license: Path | None, third_party: Sequence[Path], root: Path) -> str:
    """The combined text: the project's license, then one headed section per third-party file.

    Section headers name each third-party file relative to ``root``.  The same inputs
    always give the same text: LF line endings, input order kept, each file once.
    """
    parts: list[str] = []
    if project_license is not None:
        parts.append(_read(project_license, root))
    seen = {project_license.resolve()} if project_license is not None else set()
    for path in third_party:
        if path.resolve() in seen:  # listed twice, or the project's own license again
            continue
        seen.add(path.resolve())
        header = f"{_RULE}\nThird-party license: {_display_name(path, root)}\n{_RULE}\n\n"
        parts.append(header + _read(path, root))
    return "\n\n".join(parts)



def dist_info_license_name(path: str) -> str:
    """Where setuptools puts a license file inside ``.dist-info/licenses`` (and names it in METADATA)."""
    normalized = os.path.normpath(path).replace(os.sep, "/")
    return os.path.basename(normalized) if "../" in normalized else normalized


def _project_license(paths: Sequence[str]) -> str | None:
    named = [p for p in paths if PROJECT_LICENSE.match(os.path.basename(p))]
    candidates = named or list(paths)
    return candidates[0] if candidates else None


def bundle_licenses(dist_info: Path, own_paths: Sequence[str], third_party: Sequence[Path], root: Path) -> str | None:
    """Write the project's license followed by the third-party ones where setuptools put the
    project's own (``own_paths``: PEP 639 license files, as setuptools found them).  Returns
    the name of the file written when the project has no license of its own (METADATA must
    then name it), else None."""
    own = _project_license(own_paths)
    if own is None:
        console.warn("the project has no license file of its own; the wheel's LICENSE holds only the "
                     "third-party licenses from [tool.buildkit] licenses.")
    name = "LICENSE" if own is None else dist_info_license_name(own)
    target = dist_info / "licenses" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    text = license_text(None if own is None else Path(own).absolute(), third_party, root)
    target.write_text(text, encoding="utf-8", newline="\n")
    return name if own is None else None
