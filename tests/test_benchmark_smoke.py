"""The benchmarks in their --smoke modes, as CI runs benchmarks: tiny sizes, few runs,
every row building or rebuilding for real (a failed command fails the script), the
figures not judged (docs/benchmarks.md has the real runs).

rebuild.py: 6 generated C++ files, 3 runs per row, without the scikit-build-core rows
(they need the package index).  scale.py: 20 translation units, 50 headers, 1 MB of
package data, buildkit from the run's wheelhouse; its scikit-build-core rows come from
the corpus cache and are skipped when that cannot be filled.  import_rebuild.py: the
rebuild-on-import test package installed twice, into venvs that see this interpreter's
buildkit, 3 runs per row.  distributed.py: scale.py's tree at 6 units, built once locally
and once on a local sccache-dist cluster (skipped where the machine cannot host one)."""

from __future__ import annotations

import re
import sys

import pytest

from buildkit_testing.paths import REPO
from buildkit_testing.processes import clean_env, run
from buildkit_testing.skbuild_corpus import IndexUnreachable, reference_requirements

pytestmark = pytest.mark.slow


def smoke_run(script: str, *arguments: object, rows: tuple[str, ...]) -> str:
    """The output of ``script``'s --smoke run, which printed each of ``rows``."""
    out: str = run([sys.executable, REPO / "benchmarks" / script, "--smoke", *arguments], env=clean_env(),
                   timeout=600).stdout
    for row in rows:
        assert f"  {row}" in out, f"{row} is not in:\n{out}"
    return out


def test_rebuild_benchmark_smoke():
    out = smoke_run("rebuild.py", "--no-peer", rows=(
        "cold build: buildkit develop", "no-op: python setup.py develop", "no-op: buildkit develop",
        "no-op: pip install --no-build-isolation -e .", "touch one .cpp: buildkit develop",
        "touch one .cpp: ninja alone"))
    assert "6 C++ files, median of 3 runs" in out, out
    assert "scikit-build-core" not in out
    ratios = [line for line in out.splitlines() if line.rstrip().endswith((" yes", " NO"))]
    assert len(ratios) == 3, out  # the pip ratio needs the peer rows


def test_scale_benchmark_smoke(wheelhouse):
    out = smoke_run("scale.py", "--wheelhouse", wheelhouse, rows=(
        "cold: buildkit develop", "floor: ninja -C build/{soabi} (no-op)", "floor: python -c pass",
        "floor: zip the package folder", "no-op: buildkit develop, back to back",
        "no-op: python setup.py develop", "touch one installed header: ninja alone",
        "touch one .cpp: buildkit develop", "wheel: pip wheel --no-build-isolation",
        "no-op: pip install --no-build-isolation -e . (buildkit)", "no-op: buildkit develop, 40 TUs"))
    assert "20 translation units, 50 headers, 1 MB of package data" in out, out
    assert "cold: buildkit develop build passes" in out, out
    assert " PASS" not in out and " FAIL" not in out, out  # the smoke sizes are not judged


def test_cold_build_benchmark_smoke(wheelhouse):
    """simplest_c's `pip install .` once by each tool: both sides build, the row prints."""
    try:
        reference_requirements()
    except IndexUnreachable as unreachable:
        pytest.skip(str(unreachable))
    out = run([sys.executable, REPO / "benchmarks" / "cold_build.py", "--smoke", "--wheelhouse", wheelhouse],
              env=clean_env(), timeout=600).stdout
    assert "median of 1 runs per side" in out, out
    assert "  simplest_c: pip install ." in out, out
    assert " PASS" not in out and " FAIL" not in out, out  # one run is not judged


def test_import_rebuild_benchmark_smoke():
    out = smoke_run("import_rebuild.py", rows=(
        "floor: python -c pass", "import, without the setting", "import, editable-rebuild, nothing changed",
        "import, editable-rebuild, BUILDKIT_EDITABLE_REBUILD=0", "touch one .cpp: import, editable-rebuild",
        "touch one .cpp: buildkit build, then import, without the setting"))
    assert "median of 3 runs" in out, out
    assert "editable-rebuild, nothing changed: + " in out and "target:" not in out, out  # the smoke run is not judged


def test_distributed_benchmark_smoke():
    """Both sides build, every distributed compile runs on a build server (the script stops
    otherwise), buildkit sizes ninja's jobs to the cluster's slots, and the measured figures
    come apart from the modelled ones."""
    result = run([sys.executable, REPO / "benchmarks" / "distributed.py", "--smoke"], env=clean_env(), timeout=600,
                 check=False)
    if result.returncode == 3:
        pytest.skip(" ".join(result.stderr.split()))
    out = result.stdout
    assert result.returncode == 0, f"{out}\n{result.stderr}"
    slots = re.search(r"cluster: 2 build servers, (\d+) slots", out)
    assert slots, out
    jobs = {side: re.search(rf"run 1 {side} *: .* ninja -j (\d+),", out) for side in ("local", "distributed")}
    assert all(jobs.values()), out
    assert jobs["distributed"].group(1) == slots.group(1), out  # type: ignore[union-attr]
    assert "per unit: c = " in out and "6 remote compiles + 1 test compile" in out, out
    measured, modelled = out.index("\nMEASURED"), out.index("\nMODELLED")
    assert measured < modelled and all(f"S = {count:4}:" in out[modelled:] for count in (8, 32, 128)), out
