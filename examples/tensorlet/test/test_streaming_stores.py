"""Streaming stores (ops/cpu/CpuCapability.cpp, VecKernels.inc's map_range): an
elementwise op whose operands exceed what the caches keep writes its result past them.
The threshold is the largest data cache's share for the CPUs sysfs says share it (at most
8 MiB per CPU: a virtual machine sees the host's whole L3), or TENSORLET_STREAMING_THRESHOLD.

Each case runs a fresh interpreter: the threshold is read once per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, requires_build

pytestmark = requires_build

VARIABLE = "TENSORLET_STREAMING_THRESHOLD"
MAX_CACHE_PER_CPU = 8 << 20
UNKNOWN_CACHE = 32 << 20

THRESHOLD = r"""
import ctypes, os, sys
sys.path.insert(0, sys.argv[1])
import tensorlet as tl
lib = ctypes.CDLL(os.path.join(tl.utils.library_path, "libtensorlet.so"))
lib.tensorlet_streaming_threshold_bytes.restype = ctypes.c_int64
print(lib.tensorlet_streaming_threshold_bytes())
try:
    tl.exp(tl.ones(4))
    (tl.ones(4) + tl.ones(4)).numpy()
    print("ran")
except ValueError as error:
    print(error)
"""


def run_child(code: str, value: str | None, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    if value is not None:
        env[VARIABLE] = value
    return subprocess.run([sys.executable, "-c", code, str(ROOT), *args], env=env, capture_output=True,
                          text=True, check=True).stdout


def threshold(value: str | None) -> tuple[int, str]:
    bytes_line, op_line = run_child(THRESHOLD, value).splitlines()
    return int(bytes_line), op_line


def count_cpus(cpu_list: str) -> int:
    count = 0
    for part in cpu_list.strip().split(","):
        low, _, high = part.partition("-")
        count += int(high) - int(low) + 1 if high else 1
    return max(count, 1)


def largest_data_cache() -> tuple[int, int]:
    """sysfs's largest data or unified cache of cpu0 and the CPUs sharing it; (0, 1) without sysfs."""
    largest = (0, 1)
    caches = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(caches.glob("index*")):
        if (index / "type").read_text().strip() == "Instruction":
            continue
        text = (index / "size").read_text().strip()
        size = int(text.rstrip("KMG")) << {"K": 10, "M": 20, "G": 30}.get(text[-1], 0)
        if size > largest[0]:
            shared = index / "shared_cpu_list"
            largest = (size, count_cpus(shared.read_text()) if shared.exists() else 1)
    return largest


def test_default_is_the_largest_caches_share():
    size, sharing = largest_data_cache()
    expected = min(size, sharing * MAX_CACHE_PER_CPU) if size else UNKNOWN_CACHE
    assert threshold(None) == (expected, "ran")
    assert threshold("") == (expected, "ran")  # empty is unset


@pytest.mark.parametrize("value, expected", [("0", 0), ("4096", 4096), ("16M", 16 << 20), ("64K", 64 << 10),
                                             ("2G", 2 << 30)])
def test_threshold_from_the_environment(value, expected):
    assert threshold(value) == (expected, "ran")


@pytest.mark.parametrize("value", ["16X", "-1", "16 M", "1.5M", "M", "16MB", "99999999999G"])
def test_a_threshold_that_is_not_a_size_is_refused_by_name(value):
    seen, message = threshold(value)
    assert seen == -1
    assert message.startswith(f"{VARIABLE}={value} is not a size"), message
    assert "16M" in message


STREAMED = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import tensorlet as tl
rng = np.random.default_rng(11)
results = {}
for dtype in ("float32", "float64"):
    for n in (1, 15, 33, 1000, 100_003):
        x = (rng.standard_normal(n) * 4).astype(dtype)
        y = rng.standard_normal(n).astype(dtype)
        for offset in range(4):  # results that start off a vector's alignment
            out = np.zeros(n + 4, dtype)
            view = tl.from_numpy(out[offset:offset + n])
            for op in ("neg", "abs", "relu", "sign", "exp", "log", "sqrt", "sigmoid", "tanh"):
                getattr(tl, op)(tl.from_numpy(x), out=view)
                results[f"{op} {dtype} {n} {offset}"] = out.tobytes().hex()
            for op in ("add", "mul"):
                getattr(tl, op)(tl.from_numpy(x), tl.from_numpy(y), out=view)
                results[f"{op} {dtype} {n} {offset}"] = out.tobytes().hex()
print(json.dumps(results))
"""


def test_streamed_results_equal_cached_ones_bit_for_bit():
    """Threshold 0 streams every run (the head up to an aligned vector, the prefetches and the
    tail included); the values are those of plain stores, and nothing outside the result moves."""
    streamed = json.loads(run_child(STREAMED, "0"))
    cached = json.loads(run_child(STREAMED, "1G"))
    assert streamed.keys() == cached.keys()
    differing = [key for key in streamed if streamed[key] != cached[key]]
    assert not differing, differing[:5]
    # The bytes around each result stayed zero (a view of 4 spare elements).
    sample = np.frombuffer(bytes.fromhex(streamed["add float32 1000 3"]), np.float32)
    assert not sample[:3].any() and not sample[1003:].any() and sample[3:1003].all()
