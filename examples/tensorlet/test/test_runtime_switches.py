"""The run-time switches of the CPU backend (README, "At run time"; csrc/core/Environment.h):
TENSORLET_CPU_CAPABILITY picks the vector kernels, TENSORLET_USE_BLAS and
TENSORLET_HUGE_PAGES are switches read as CMake reads a boolean. A value that is none of
these is refused by name (a ValueError from the ops that read it), never taken as on or as
unset. TENSORLET_STREAMING_THRESHOLD has its own file (test_streaming_stores.py).

Each case runs a fresh interpreter: a switch is read once per process."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

try:
    from tensorlet.config import build_info
except ImportError:  # not built: requires_build skips every case
    build_info = dict

from conftest import ROOT, requires_build

pytestmark = requires_build

PROBE = r"""
import ctypes, os, sys
sys.path.insert(0, sys.argv[1])
import tensorlet as tl
lib = ctypes.CDLL(os.path.join(tl.utils.library_path, "libtensorlet.so"))
lib.tensorlet_cpu_capability.restype = ctypes.c_char_p
name = lib.tensorlet_cpu_capability()
print(name.decode() if name is not None else "refused")
for what, run in (("unary", lambda: tl.exp(tl.ones(40))), ("matmul", lambda: tl.ones(8, 8) @ tl.ones(8, 8)),
                  ("allocation", lambda: tl.ones(1 << 20))):
    try:
        run()
        print(what, "ran")
    except ValueError as error:
        print(what, error)
"""


def probe(**variables: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORLET_")}
    env.update(variables)
    return subprocess.run([sys.executable, "-c", PROBE, str(ROOT)], env=env, capture_output=True, text=True,
                          check=True).stdout.splitlines()


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def capabilities() -> list[str]:
    """The variants this build has and this CPU runs, narrowest first."""
    built = build_info()["cpu_variants"].split(";")
    flags = cpu_flags() if platform.machine() in ("x86_64", "AMD64") and Path("/proc/cpuinfo").exists() else set()
    runs = {"default": True, "avx2": {"avx2", "fma"} <= flags, "avx512": "avx512f" in flags}
    return [name for name in ("default", "avx2", "avx512") if name in built and runs[name]]


def test_unset_picks_the_widest_kernels_the_cpu_runs():
    assert probe()[0] == capabilities()[-1]
    assert probe(TENSORLET_CPU_CAPABILITY="")[0] == capabilities()[-1]


@pytest.mark.parametrize("asked", ["default", "avx2", "avx512", "AVX2", "Default"])
def test_a_capability_caps_the_kernels(asked):
    order = ["default", "avx2", "avx512"]
    expected = [name for name in capabilities() if order.index(name) <= order.index(asked.lower())][-1]
    assert probe(TENSORLET_CPU_CAPABILITY=asked) == [expected, "unary ran", "matmul ran", "allocation ran"]


@pytest.mark.parametrize("value", ["avx3", "sse", "best", "avx2 "])
def test_a_capability_that_does_not_exist_is_refused_by_name(value):
    seen = probe(TENSORLET_CPU_CAPABILITY=value)
    assert seen[0] == "refused"
    assert seen[1].startswith(f"unary TENSORLET_CPU_CAPABILITY={value} is not a CPU capability: give default, "
                              "avx2 or avx512"), seen


@pytest.mark.parametrize("value", ["0", "OFF", "off", "No", "FALSE", "n", "1", "ON", "yes", "True", "Y", "2", "-1",
                                   "00", ""])
def test_switches_read_as_cmake_reads_a_boolean(value):
    # Whether the switch took effect is each feature's own test (test_allocator.py for huge
    # pages, test_components.py for BLAS); here every spelling CMake accepts is accepted.
    assert probe(TENSORLET_HUGE_PAGES=value, TENSORLET_USE_BLAS=value)[1:] == ["unary ran", "matmul ran",
                                                                              "allocation ran"]


@pytest.mark.parametrize("variable, refused_by", [("TENSORLET_HUGE_PAGES", "allocation"),
                                                  ("TENSORLET_USE_BLAS", "matmul")])
@pytest.mark.parametrize("value", ["of", "enabled", "1.0", "0x1", "+", "on please"])
def test_a_switch_that_is_not_a_boolean_is_refused_by_name(variable, refused_by, value):
    if variable == "TENSORLET_USE_BLAS" and not build_info()["blas"]:
        pytest.skip("without USE_BLAS nothing reads TENSORLET_USE_BLAS (test_components.py checks the full build)")
    seen = dict(line.split(" ", 1) for line in probe(**{variable: value})[1:])
    assert seen[refused_by].startswith(f"{variable}={value} is not a switch: give 1, ON, YES or TRUE"), seen
