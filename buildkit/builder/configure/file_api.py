"""What the CMake File API says about a build folder, instead of guessing.

buildkit asks for the toolchains before each configure (a query file under
``.cmake/api/v1/query/client-buildkit``); CMake answers with a JSON reply that says
which compiler (and version) each language got.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from buildkit._util.fileutil import read_json, write_text_if_changed
from buildkit.builder.build_state import FILE_API, FILE_API_CLIENT, FILE_API_QUERY

QUERY = {"requests": [{"kind": "toolchains", "version": 1}]}


def api_dir(build_dir: Path) -> Path:
    return Path(build_dir) / FILE_API


def query_kinds() -> str:
    """The replies buildkit asks for, as a configure input: a build folder configured before a
    kind was added is configured again, so that its reply exists."""
    return ", ".join(f"{r['kind']} v{r['version']}" for r in QUERY["requests"])


def write_query(build_dir: Path) -> None:
    """Ask CMake for the toolchains at the next configure."""
    write_text_if_changed(Path(build_dir) / FILE_API_QUERY, json.dumps(QUERY))


def _table(value: Any, key: str) -> dict[str, Any]:
    """``value[key]`` when both are JSON objects; else an empty one (a damaged reply)."""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


def _reply(build_dir: Path, kind: str) -> tuple[dict[str, Any], Path] | None:
    """The newest reply of ``kind`` to our query, and the reply folder; None without one,
    or when the reply is unreadable (the next configure writes it anew)."""
    reply = api_dir(build_dir) / "reply"
    indexes = sorted(reply.glob("index-*.json"))
    if not indexes:
        return None
    client = _table(_table(read_json(indexes[-1]), "reply"), FILE_API_CLIENT)
    responses = _table(client, "query.json").get("responses", [])
    for response in responses if isinstance(responses, list) else ():
        if isinstance(response, dict) and response.get("kind") == kind and isinstance(response.get("jsonFile"), str):
            found = read_json(reply / response["jsonFile"])
            return (found, reply) if isinstance(found, dict) else None
    return None


def compiler_version(build_dir: Path, language: str) -> str | None:
    """The version of the compiler CMake configured for ``language`` (``CUDA``: nvcc's, e.g.
    ``13.0.88``), from the toolchains reply; None when the language is not enabled."""
    found = _reply(build_dir, "toolchains")
    toolchains = found[0].get("toolchains", []) if found else []
    return next((t.get("compiler", {}).get("version") for t in toolchains if t.get("language") == language), None)
