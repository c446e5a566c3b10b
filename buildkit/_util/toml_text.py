"""TOML text from parsed TOML data (``tomllib`` reads, nothing in the standard library writes).

Enough for a configuration file read back by another program: tables, arrays of tables,
strings, numbers, booleans, dates and arrays of those.  Every key is quoted, so any
key survives as it was.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any


def toml_text(table: Mapping[str, Any]) -> str:
    """``table`` as TOML that ``tomllib.loads`` reads back as the same data."""
    return "\n".join(_table(table, ())) + "\n"


def _table(table: Mapping[str, Any], path: tuple[str, ...]) -> list[str]:
    lines, later = [], []
    for key, value in table.items():
        if isinstance(value, Mapping):
            later += ["", f"[{_dotted((*path, key))}]", *_table(value, (*path, key))]
        elif isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
            for item in value:
                later += ["", f"[[{_dotted((*path, key))}]]", *_table(item, (*path, key))]
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    return lines + later


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(map(_key, path))


def _key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        # A JSON string with only the control characters escaped is a TOML basic string.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(map(_value, value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")
