"""tensorlet's CPU wheel is reproducible, and a test run builds tensorlet only twice.

Two builds of one commit in different folders -- the README's in-place build and
the first phase of `full_build` (a clone of the same commit elsewhere) -- give
byte-identical wheels with SOURCE_DATE_EPOCH set. Neither compiles anything for
this test: the in-place wheel reuses the develop build folder, and the copy's
wheel is what `full_build` built first. The second phase of `full_build` turns
the optional parts on in the same folder and compiles only what they add."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit_testing.artifacts import sha256
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import run, steering_free_env
from conftest import ROOT, SOURCE_DATE_EPOCH, compiled_since, ninja_entries, requires_build, wheel_defining_entries

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _differences(one: Path, two: Path) -> list[str]:
    """What differs between two wheels, member by member (names, metadata, bytes)."""
    with zipfile.ZipFile(one) as a, zipfile.ZipFile(two) as b:
        if a.namelist() != b.namelist():
            return [f"members: only in the first {sorted(set(a.namelist()) - set(b.namelist()))}, only in the "
                    f"second {sorted(set(b.namelist()) - set(a.namelist()))}, or another order"]
        found = []
        for x, y in zip(a.infolist(), b.infolist()):
            if (x.date_time, x.external_attr, x.compress_type) != (y.date_time, y.external_attr, y.compress_type):
                found.append(f"{x.filename}: zip entry {x.date_time, oct(x.external_attr)} vs "
                             f"{y.date_time, oct(y.external_attr)}")
            elif a.read(x) != b.read(y):
                found.append(f"{x.filename}: contents differ")
        return found


@pytest.mark.slow
@requires_build
def test_cpu_wheel_is_byte_identical_across_build_folders(full_build, tmp_path):
    in_place = wheel_defining_entries(build_folder(ROOT))
    if in_place != full_build.cpu_entries:
        copied = full_build.cpu_entries
        changed = {k: (in_place[k], copied[k]) for k in in_place if in_place[k] != copied[k]}
        message = (f"the in-place build is configured unlike the README's default build: {changed}; "
                   "rebuild it with `buildkit develop examples/tensorlet` and no build variables set")
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    before = ninja_entries(build_folder(ROOT))
    # No time limit: locally, sources edited since the last develop are compiled here.
    run([sys.executable, "setup.py", "-q", "bdist_wheel", "--dist-dir", tmp_path],
        cwd=ROOT, env=steering_free_env(SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH), timeout=None)
    recompiled = compiled_since(before, build_folder(ROOT))
    # In CI the README's build is current: packaging it must not compile (the run's budget
    # is two tensorlet builds). Locally, sources edited since the last develop are rebuilt.
    assert not (IN_CI and recompiled), f"the in-place wheel recompiled {recompiled}: not the README's build"
    (wheel,) = tmp_path.glob("tensorlet-*.whl")
    copy = full_build.cpu_wheel
    assert Path(ROOT).resolve() != full_build.root.resolve()
    assert wheel.name == copy.name
    assert sha256(wheel) == sha256(copy), "\n".join(_differences(wheel, copy))
    # What makes this non-trivial: native code from two folders, and no path of either inside.
    names = zipfile.ZipFile(wheel).namelist()
    assert {"tensorlet/lib/libtensorlet.so", "tensorlet/lib/libtensorlet_python.so"} <= set(names)
    for member in names:
        if member.endswith(".so"):
            data = zipfile.ZipFile(wheel).read(member)
            assert str(ROOT).encode() not in data and str(full_build.root).encode() not in data, member


@pytest.mark.slow
def test_second_build_compiles_only_what_the_optional_parts_add(full_build):
    """The second phase of full_build reuses the first phase's objects: turning USE_CUDA,
    USE_BLAS and USE_TLPROF on compiles their own files (and the one file BLAS changes),
    so the run compiles tensorlet twice in all, not three times."""
    compiled = full_build.compiled["everything on"]
    print("second phase compiled:", [Path(o).name for o in compiled])  # shown with -rP
    added = ("/tensorlet_cuda.dir/", "/tensorlet_profiler.dir/", "/tensorlet.dir/csrc/ops/cpu/LinearKernels.cpp.o")
    unexpected = [o for o in compiled if not any(part in f"/{o}" for part in added)]
    assert not unexpected, f"turning the optional parts on recompiled {unexpected}"
    config = full_build.build_config()
    assert config["profiler"] and any("/tensorlet_profiler.dir/" in f"/{o}" for o in compiled)
    if config["blas"]:
        assert "CMakeFiles/tensorlet.dir/csrc/ops/cpu/LinearKernels.cpp.o" in compiled
    if config["cuda"]:
        assert any(o.endswith(".cu.o") for o in compiled)
