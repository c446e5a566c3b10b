"""What the CMake File API says about a build folder, instead of guessing.

buildkit asks for the codemodel and the toolchains before each configure (a query
file under ``.cmake/api/v1/query/client-buildkit``); CMake answers with JSON
replies: the toolchains say which compiler (and version) each language got.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CLIENT = "client-buildkit"
QUERY = {"requests": [{"kind": "codemodel", "version": 2}, {"kind": "toolchains", "version": 1}]}


def api_dir(build_dir: Path) -> Path:
    return Path(build_dir) / ".cmake" / "api" / "v1"


def query_kinds() -> str:
    """The replies buildkit asks for, as a configure input: a build folder configured before a
    kind was added is configured again, so that its reply exists."""
    return ", ".join(f"{r['kind']} v{r['version']}" for r in QUERY["requests"])


def request_codemodel(build_dir: Path) -> None:
    """Ask CMake for the codemodel and the toolchains at the next configure."""
    query = api_dir(build_dir) / "query" / CLIENT / "query.json"
    text = json.dumps(QUERY)
    if not query.is_file() or query.read_text(encoding="utf-8") != text:
        query.parent.mkdir(parents=True, exist_ok=True)
        query.write_text(text, encoding="utf-8")


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _reply(build_dir: Path, kind: str) -> tuple[dict, Path] | None:
    """The newest reply of ``kind`` to our query, and the reply folder; None without one."""
    reply = api_dir(build_dir) / "reply"
    indexes = sorted(reply.glob("index-*.json"))
    if not indexes:
        return None
    responses = _read(indexes[-1]).get("reply", {}).get(CLIENT, {}).get("query.json", {}).get("responses", [])
    for response in responses:
        if response.get("kind") == kind and "jsonFile" in response:
            return _read(reply / response["jsonFile"]), reply
    return None


def codemodel(build_dir: Path) -> tuple[dict, Path] | None:
    """The newest codemodel reply for our query, and the reply folder; None without one."""
    return _reply(build_dir, "codemodel")


def compiler_version(build_dir: Path, language: str) -> str | None:
    """The version of the compiler CMake configured for ``language`` (``CUDA``: nvcc's, e.g.
    ``13.0.88``), from the toolchains reply; None when the language is not enabled."""
    found = _reply(build_dir, "toolchains")
    toolchains = found[0].get("toolchains", []) if found else []
    return next((t.get("compiler", {}).get("version") for t in toolchains if t.get("language") == language), None)
