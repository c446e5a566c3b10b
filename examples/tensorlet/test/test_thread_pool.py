"""The CPU kernels' thread pool (csrc/ops/cpu/Parallel.cpp): a job's pieces are shared out in
blocks, one per thread, and a thread that is done takes what is left of the others' blocks.
Whatever the thread count (more threads than cores included: workers start late and their
blocks are taken by others) and however many Python threads call at once (the dispatcher
releases the GIL; a caller that finds the pool busy runs its job alone), every piece runs
exactly once: the results are NumPy's, bit for bit, and the same for every thread count.

Each thread count runs in a fresh interpreter: the pool is made once per process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT, requires_build

pytestmark = requires_build

SIZES = (32767, 32768, 65537, 262147, (1 << 20) + 5, (1 << 22) + 3)

RESULTS = r"""
import hashlib, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import tensorlet as tl
rng = np.random.default_rng(5)
digest = hashlib.sha256()
for n in map(int, sys.argv[2:]):
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    ta, tb = tl.from_numpy(a), tl.from_numpy(b)
    for _ in range(3):  # a repeat finds the workers spinning, the first call may find them asleep
        added, negated = (ta + tb).numpy(), tl.neg(ta).numpy()
        assert np.array_equal(added, a + b) and np.array_equal(negated, -a), n
        exps, total = tl.exp(ta).numpy(), ta.sum().item()
        digest.update(exps.tobytes() + np.float64(total).tobytes())
print(digest.hexdigest())
"""

CONCURRENT = r"""
import sys, threading
sys.path.insert(0, sys.argv[1])
import numpy as np
import tensorlet as tl
n = (1 << 20) + 7
rng = np.random.default_rng(6)
a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
ta, tb = tl.from_numpy(a), tl.from_numpy(b)
failures = []

def caller(k):
    out = np.empty(n, np.float32)
    for i in range(40):
        tl.add(ta, tb, out=tl.from_numpy(out)) if (i + k) % 2 else tl.mul(ta, tb, out=tl.from_numpy(out))
        if not np.array_equal(out, a + b if (i + k) % 2 else a * b):
            failures.append((k, i))

threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("failures", failures)
"""


def run_child(code: str, threads: str, *args: str) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": threads}
    return subprocess.run([sys.executable, "-c", code, str(ROOT), *args], env=env, capture_output=True, text=True,
                          check=True, timeout=300).stdout.strip()


def test_every_piece_runs_once_whatever_the_thread_count():
    digests = {threads: run_child(RESULTS, threads, *map(str, SIZES)) for threads in ("1", "2", "3", "8")}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.parametrize("threads", ["2", "3"])
def test_callers_on_several_python_threads_at_once(threads):
    assert run_child(CONCURRENT, threads) == "failures []"
