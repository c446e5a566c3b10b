"""Reading ``pyproject.toml``: the file, and its ``[tool.buildkit]`` table."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from buildkit.errors import ConfigError

TABLE = "tool.buildkit"


def read_pyproject(path: Path) -> dict[str, Any] | None:
    """The parsed ``pyproject.toml``; None when there is none."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}.",
                          "Fix the syntax error and run the build again.") from exc


def buildkit_table(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The ``[tool.buildkit]`` table of the parsed ``pyproject.toml`` at ``path`` ({} when absent)."""
    table = data.get("tool", {}).get("buildkit", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{TABLE}] in {path} must be a table, not {table!r}.",
                          "Write it as `[tool.buildkit]` followed by keys.")
    return table
