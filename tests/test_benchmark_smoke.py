"""benchmarks/rebuild.py in its --smoke mode, as CI runs benchmarks: 6 generated C++
files, 3 runs per row, without the scikit-build-core rows (they need the package
index). Every row builds or rebuilds for real; a failed command fails the script.
The figures are not judged here (docs/benchmarks.md has the real run)."""

from __future__ import annotations

import sys

import pytest

from buildkit_testing.paths import REPO
from buildkit_testing.processes import clean_env, run

pytestmark = pytest.mark.slow


def test_rebuild_benchmark_smoke():
    out = run([sys.executable, REPO / "benchmarks" / "rebuild.py", "--smoke", "--no-peer"], env=clean_env(),
              timeout=600).stdout
    assert "6 C++ files, median of 3 runs" in out, out
    for row in ("cold build: buildkit develop", "no-op: python setup.py develop", "no-op: buildkit develop",
                "no-op: pip install --no-build-isolation -e .", "touch one .cpp: buildkit develop",
                "touch one .cpp: ninja alone"):
        assert f"  {row}" in out, row
    assert "scikit-build-core" not in out
    ratios = [line for line in out.splitlines() if line.rstrip().endswith((" yes", " NO"))]
    assert len(ratios) == 3, out  # the pip ratio needs the peer rows
