"""What the CMake File API says about a build folder, instead of guessing.

buildkit asks for the codemodel before each configure (a query file under
``.cmake/api/v1/query/client-buildkit``); CMake answers with JSON replies that
list, among other things, every ``install(FILES/DIRECTORY)`` source. Those are
the install step's inputs that Ninja knows nothing about: a header added to an
installed folder changes no build target, but must still be installed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from buildkit._util.fileutil import mtime_ns, read_json, write_json

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


def _installer_paths(entries: Iterable[Any]) -> Iterable[str]:
    for entry in entries:
        yield entry["from"] if isinstance(entry, dict) else entry


def installed_sources(build_dir: Path) -> list[Path]:
    """Source files and folders that ``install(FILES ...)`` / ``install(DIRECTORY ...)`` copy."""
    found = codemodel(build_dir)
    if found is None:
        return []
    model, reply = found
    top = Path(model["paths"]["source"])
    sources: set[Path] = set()
    for configuration in model.get("configurations", []):
        for directory in configuration.get("directories", []):
            if "jsonFile" not in directory:
                continue
            for installer in _read(reply / directory["jsonFile"]).get("installers", []):
                if installer.get("type") in {"file", "directory"}:
                    sources.update(top / p for p in _installer_paths(installer.get("paths", [])))
    build = Path(build_dir).resolve()
    # Files CMake generated into the build folder are outputs of the build, which Ninja tracks.
    return sorted(p for p in sources if not p.resolve().is_relative_to(build))


def installed_sources_cached(build_dir: Path, cache_file: Path) -> list[Path]:
    """:func:`installed_sources`, re-read only when CMake wrote a newer reply (a configure
    by buildkit, or Ninja regenerating the build after a CMakeLists.txt edit)."""
    indexes = sorted((api_dir(build_dir) / "reply").glob("index-*.json"))
    cached = mtime_ns(cache_file)
    if cached is not None and (not indexes or (mtime_ns(indexes[-1]) or 0) <= cached):
        return [Path(p) for p in read_json(cache_file) or []]
    sources = installed_sources(build_dir)
    write_json(cache_file, [str(p) for p in sources])
    return sources


def newest_mtime_ns(paths: Iterable[Path]) -> int:
    """The newest modification time among the paths and everything below them (0 if none)."""
    newest = 0
    for path in paths:
        try:
            newest = max(newest, path.stat().st_mtime_ns)
        except OSError:
            continue
        if path.is_dir():
            for folder, _, files in os.walk(path):
                newest = max(newest, os.stat(folder).st_mtime_ns,
                             *(os.stat(os.path.join(folder, f)).st_mtime_ns for f in files))
    return newest
