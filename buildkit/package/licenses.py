"""One license text for a wheel: the project's license followed by third-party ones.

A wheel that bundles vendored C++ libraries must ship their license texts too.
``[tool.buildkit] licenses`` lists them; :func:`concatenate_licenses` writes the
combined text, which the ``bdist_wheel`` command puts in place of the project's
license inside the ``.dist-info`` (the source tree's LICENSE is never rewritten).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from buildkit._util.fileutil import write_text_if_changed
from buildkit.errors import ConfigError

SETTINGS_KEY = "licenses"
_RULE = "-" * 79


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
    """The combined text: the project's license, then one headed section per third-party file."""
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


def concatenate_licenses(project_license: Path | None, third_party: Sequence[Path], output: Path,
                         *, root: Path | None = None) -> Path:
    """Write the combined license text to ``output`` and return it.

    Section headers name each third-party file relative to ``root`` (default: the
    project license's folder, else the current directory).  The same inputs always
    give the same bytes: LF line endings, UTF-8, input order kept.
    """
    if root is None:
        root = project_license.parent if project_license is not None else Path.cwd()
    text = license_text(project_license, third_party, root)
    write_text_if_changed(output, text)  # atomic: a failed write never leaves a truncated license
    return output
