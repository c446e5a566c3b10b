"""Distributed compiles through sccache-dist: what buildkit reads of sccache and its cluster.

Everything here reads text that sccache wrote or will read; nothing starts a process
(:mod:`buildkit.builder.toolchain.dist_session` runs sccache).  Tested with sccache
0.16.0 (``SCCACHE_VERSION``):

* the client configuration, the file sccache itself reads: ``SCCACHE_CONF``, else
  ``$XDG_CONFIG_HOME/sccache/config`` (``~/.config/sccache/config``) on Linux and
  ``~/Library/Application Support/Mozilla.sccache/config`` on macOS (sccache's
  ``config_file``).  buildkit reports its ``[dist] scheduler_url``, the kind of its
  ``[dist.auth]`` and the toolchain settings; the secrets are kept only to be blanked
  out of whatever buildkit shows or writes (``redact``), never shown, logged or copied;
* ``sccache --dist-status``: one JSON value, ``{"SchedulerStatus": [url, {"num_servers",
  "num_cpus", "in_progress"}]}``, ``{"NotConnected": [url, reason]}`` or
  ``{"Disabled": reason}``; anything else is read as ``unreadable``, never a traceback;
* ``sccache --show-stats --stats-format=json``: ``compilations`` (every compile sccache
  ran, remote or local), ``dist_compiles`` (per build server), ``dist_errors`` (remote
  compiles that failed and ran locally instead), ``cache_hits``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCCACHE_VERSION = "0.16.0"  # the release these readings were checked against
# The secrets a client configuration may hold under [dist.auth] (token auth, OAuth2 settings).
_SECRET_KEYS = ("token", "client_id")


@dataclass(frozen=True)
class ClientConfig:
    """What buildkit reads of sccache's client configuration."""

    path: Path
    scheduler_url: str | None = None
    auth: str = "none"  # [dist.auth] type: token, mozilla, oauth2_code_grant_pkce...
    toolchains: int = 0  # prepackaged toolchains ([dist] toolchains)
    toolchain_cache: str | None = None  # [dist] cache_dir, where the packaged toolchains are kept
    problem: str | None = None  # why the file could not be read, if it could not
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)  # the whole file
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def redact(self, text: str) -> str:
        """``text`` with every secret of the configuration blanked out."""
        for secret in self.secrets:
            text = text.replace(secret, "<secret>")
        return text

    def without_dist(self) -> dict[str, Any]:
        """The configuration without its [dist] table: the same caches, compiles kept local."""
        return {key: value for key, value in self.data.items() if key != "dist"}


def client_config_path(environ: Mapping[str, str]) -> Path:
    """The client configuration file sccache reads, by sccache's own search."""
    if environ.get("SCCACHE_CONF"):
        return Path(environ["SCCACHE_CONF"])
    home = Path(environ.get("HOME") or Path.home())
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Mozilla.sccache" / "config"
    xdg = environ.get("XDG_CONFIG_HOME", "")
    return (Path(xdg) if Path(xdg).is_absolute() else home / ".config") / "sccache" / "config"


def read_client_config(path: Path) -> ClientConfig:
    """The client configuration at ``path``; a missing or broken file is a ``problem``, never an error."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ClientConfig(path, problem=f"there is no sccache client configuration at {path}")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        # The message of a TOML error quotes no value, only where it is.
        return ClientConfig(path, problem=f"sccache's client configuration {path} cannot be read ({exc})")
    dist = _table(data, "dist")
    auth = _table(dist, "auth")
    secrets = tuple(str(auth[key]) for key in _SECRET_KEYS if isinstance(auth.get(key), str) and auth[key])
    url = dist.get("scheduler_url")
    toolchains = dist.get("toolchains")
    return ClientConfig(
        path, scheduler_url=url if isinstance(url, str) and url else None,
        auth=str(auth.get("type", "none")), toolchains=len(toolchains) if isinstance(toolchains, list) else 0,
        toolchain_cache=dist.get("cache_dir") if isinstance(dist.get("cache_dir"), str) else None,
        problem=None if isinstance(url, str) and url else f"{path} names no scheduler ([dist] scheduler_url)",
        data=data, secrets=secrets)


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


# ------------------------------------------------------------- the cluster

@dataclass(frozen=True)
class ClusterStatus:
    """The scheduler as the build's sccache server sees it (``sccache --dist-status``)."""

    state: str  # "connected", "not connected", "disabled" or "unreadable"
    scheduler: str | None = None
    servers: int = 0
    slots: int = 0  # the build servers' cores together: compiles the cluster runs at once
    in_progress: int = 0
    reason: str = ""  # sccache's words for a state other than connected, or what could not be read

    @property
    def usable(self) -> bool:
        return self.state == "connected" and self.servers > 0 and self.slots > 0

    def problem(self) -> str | None:
        """Why the cluster cannot take compiles, in words; None when it can."""
        if self.usable:
            return None
        where = f"the scheduler {self.scheduler}" if self.scheduler else "the scheduler"
        if self.state == "connected":
            return f"{where} has no build servers"
        if self.state == "not connected":
            return f"{where} cannot be reached (sccache: {self.reason})"
        if self.state == "disabled":
            return f"sccache has distributed compiles off ({self.reason})"
        return f"`sccache --dist-status` said something buildkit cannot read ({self.reason})"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def parse_dist_status(text: str) -> ClusterStatus:
    """``sccache --dist-status``'s output, read defensively: another shape is ``unreadable``."""
    shown = " ".join(text.split())[:120] or "no output"
    try:
        value = json.loads(text)
    except ValueError:
        return ClusterStatus("unreadable", reason=shown)
    if not isinstance(value, dict) or len(value) != 1:
        return ClusterStatus("unreadable", reason=shown)
    (kind, body), = value.items()
    if kind == "Disabled":
        return ClusterStatus("disabled", reason=str(body))
    if kind == "NotConnected" and isinstance(body, list) and len(body) == 2:
        return ClusterStatus("not connected", _url(body[0]), reason=str(body[1]))
    if kind == "SchedulerStatus" and isinstance(body, list) and len(body) == 2 and isinstance(body[1], dict):
        counts = [_count(body[1].get(name)) for name in ("num_servers", "num_cpus", "in_progress")]
        if None not in counts:
            servers, slots, in_progress = (c or 0 for c in counts)
            return ClusterStatus("connected", _url(body[0]), servers, slots, in_progress)
    return ClusterStatus("unreadable", reason=shown)


def _url(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# ------------------------------------------------------------- the counts

@dataclass(frozen=True)
class CompileCounts:
    """What sccache did with a build's compiles."""

    remote: int = 0  # compiled on a build server
    local: int = 0  # compiled on this machine (fallbacks included)
    cached: int = 0  # taken from the cache: not compiled at all
    fallbacks: int = 0  # meant for a build server, compiled here after it failed
    failed: int = 0  # compiles that failed (the compiler's errors)

    def __sub__(self, other: CompileCounts) -> CompileCounts:
        return CompileCounts(*(max(0, a - b) for a, b in zip(self.as_tuple(), other.as_tuple(), strict=True)))

    def as_tuple(self) -> tuple[int, int, int, int, int]:
        return self.remote, self.local, self.cached, self.fallbacks, self.failed

    def as_dict(self) -> dict[str, int]:
        return dict(zip(("remote", "local", "cached", "fallbacks", "failed"), self.as_tuple(), strict=True))


def parse_stats(text: str) -> CompileCounts | None:
    """``sccache --show-stats --stats-format=json``'s counts; None when they cannot be read."""
    try:
        stats = json.loads(text)["stats"]
        remote = sum(_count(n) or 0 for n in stats["dist_compiles"].values())
        compiled = _count(stats["compilations"]) or 0
        cached = sum(_count(n) or 0 for n in stats["cache_hits"]["counts"].values())
        return CompileCounts(remote, max(0, compiled - remote), cached, _count(stats["dist_errors"]) or 0,
                             _count(stats["compile_fails"]) or 0)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def innermost_cause(text: str) -> str:
    """A warning of sccache's with its chain of JSON errors (``{"description": ..., "cause": {...}}``)
    cut to the words before it, the outer description and the innermost one."""
    start = text.find('{"description"')
    try:
        chain = json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        return text
    if not isinstance(chain, dict):
        return text
    outer = inner = chain
    while isinstance(inner.get("cause"), dict):
        inner = inner["cause"]
    parts = [text[:start].strip(), str(outer.get("description", "")), str(inner.get("description", ""))]
    return ": ".join(dict.fromkeys(part.rstrip(":") for part in parts if part))


def counts_line(counts: CompileCounts, local_pch: int) -> str:
    """The build summary's line on distributed compiles."""
    line = f"distributed compiles (sccache): {counts.remote} remote, {counts.local} local, {counts.cached} from cache"
    if counts.fallbacks:
        line += f" ({counts.fallbacks} of the local ones failed remotely first)"
    if local_pch:
        line += (f"; {local_pch} translation unit{'s' if local_pch != 1 else ''} with a precompiled header "
                 "compiled locally without sccache, which cannot distribute or cache them")
    return line


def precompiled_header_objects(compile_commands: Any) -> frozenset[str]:
    """The objects (paths relative to the build folder, as ninja names them) of the translation
    units that use a precompiled header, from ``compile_commands.json``'s entries (CMake
    force-includes its ``cmake_pch`` header into each; CMake 4 writes the output absolute, and
    CMake before 3.27 writes none: the command's ``-o`` names it)."""
    if not isinstance(compile_commands, list):
        return frozenset()
    objects = set()
    for entry in compile_commands:
        if not isinstance(entry, dict) or "cmake_pch." not in str(entry.get("command", "")):
            continue
        output = entry.get("output")
        if not isinstance(output, str):
            output = _output_of(str(entry["command"]))
        if output is None or output.endswith((".gch", ".pch")):  # the header's own compile
            continue
        objects.add(os.path.relpath(output, str(entry.get("directory") or ".")) if os.path.isabs(output) else output)
    return frozenset(objects)


def _output_of(command: str) -> str | None:
    """What ``-o`` names in a compile command; None where it is not there to read."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote: not a command CMake wrote
        return None
    return next((words[i + 1] for i, word in enumerate(words[:-1]) if word == "-o"), None)
