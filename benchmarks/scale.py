"""PyTorch-scale project (issue 14): buildkit's no-op, incremental and packaging costs
beside their floors, all measured in one run on one machine.

Generates a project shaped like PyTorch: one shared library of many tiny translation
units (sources found by `file(GLOB ... CONFIGURE_DEPENDS)`), thousands of headers
installed with `install(DIRECTORY include/ ...)`, one large data file installed as
package data, a Python package folder and a `setup.py`.  It builds it with
`buildkit develop` and times each row next to its floor (ninja's own no-op or
rebuild, interpreter start, `import setuptools`, a single-thread zip of the package):

    python benchmarks/scale.py                  # 1,500 TUs, 8,000 headers, 300 MB; 7 runs per row
    python benchmarks/scale.py --tus 500 --headers 3000 --data-mb 100
    python benchmarks/scale.py --smoke          # tiny sizes, nothing judged: a quick check for CI
    python benchmarks/scale.py --no-peer        # without the scikit-build-core rows
    python benchmarks/scale.py --before OLD     # the no-op only: this checkout against OLD's buildkit wheel

buildkit runs in a venv of its own, installed from a local wheelhouse (this
checkout's wheel plus its build dependencies: `--wheelhouse`, or one made here).
The scikit-build-core rows use another venv, from the wheels that
tests/utils/buildkit_testing/skbuild_corpus.py caches; they are skipped when the
package index cannot be reached and the cache is empty.  A full run prints PASS/FAIL
against issue 14's targets; `--smoke` prints the figures only.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from buildkit.package.wheel_zip import DEFAULT_LEVEL, DEFLATED
from buildkit_testing.benchmark_project import BUILDKIT_BACKEND, SKBUILD_BACKEND, pyproject_toml
from buildkit_testing.paths import build_folder
from buildkit_testing.skbuild_corpus import IndexUnreachable, reference_requirements
from buildkit_testing.timing import timed, touch
from buildkit_testing.venvs import make_venv, make_wheelhouse, pip_into, venv_env

BUILD_FOLDER = str(build_folder(Path(".")))  # the default build-dir under this Python, from the project

PACKAGE = "scaleproj"
HEADERS_PER_FOLDER = 500  # PyTorch's include tree is many folders, not one flat one
DATA_CHUNK = 8 << 20
ARCHIVE_ROW = "wheel: its archive write (buildkit's packing report)"

BUILDKIT_PYPROJECT = pyproject_toml(PACKAGE, BUILDKIT_BACKEND, 'version = "0.1.0"\nrequires-python = ">=3.11"',
                                    f'[tool.buildkit]\npackage = "{PACKAGE}"')

# scikit-build-core's default editable mode (redirect: the CMake install goes to
# site-packages) with a kept build folder, so that its no-op is incremental too.
SKBUILD_PYPROJECT = pyproject_toml(PACKAGE, SKBUILD_BACKEND, 'version = "0.1.0"\nrequires-python = ">=3.11"',
                                   '[tool.scikit-build]\nbuild-dir = "build/{wheel_tag}"\ncmake.build-type = "Release"')

# buildkit installs into the package folder; scikit-build-core into site-packages' root.
CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project({package} LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
file(GLOB {upper}_SOURCES CONFIGURE_DEPENDS src/*.cpp)
add_library({package} SHARED ${{{upper}_SOURCES}})
target_include_directories({package} PUBLIC include)
install(TARGETS {package} LIBRARY DESTINATION {prefix}lib)
install(DIRECTORY include/ DESTINATION {prefix}include)
install(FILES big.bin DESTINATION {prefix}lib)
"""


@dataclass(frozen=True)
class Size:
    tus: int
    headers: int
    data_bytes: int

    def describe(self) -> str:
        return (f"{self.tus:,} translation units, {self.headers:,} headers, "
                f"{self.data_bytes / 1e6:,.0f} MB of package data")


@dataclass
class Row:
    name: str
    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def spread(self) -> str:
        if len(self.seconds) == 1:
            return "1 run"
        return f"{min(self.seconds):.3f}-{max(self.seconds):.3f} ({len(self.seconds)} runs)"


def header_path(index: int) -> str:
    return f"{PACKAGE}/group{index // HEADERS_PER_FOLDER:02d}/header{index:05d}.h"


def generate(root: Path, size: Size, flavour: str) -> Path:
    """The project in ``root``: unit i declares its one function in header i (so that
    touching an installed header recompiles one unit); the other headers stand alone."""
    (root / "src").mkdir(parents=True)
    (root / PACKAGE).mkdir()
    for index in range(size.headers):
        header = root / "include" / header_path(index)
        header.parent.mkdir(parents=True, exist_ok=True)
        body = (f"int {PACKAGE}_unit{index}(int x);" if index < size.tus
                else f"inline int {PACKAGE}_header{index}(int x) {{ return x + {index}; }}")
        header.write_text(f"#pragma once\n{body}\n")
    for index in range(size.tus):
        include = f'#include "{header_path(index)}"\n' if index < size.headers else ""
        (root / "src" / f"unit{index:05d}.cpp").write_text(
            f"{include}int {PACKAGE}_unit{index}(int x) {{ return x * {index} + 1; }}\n")
    write_data(root / "big.bin", size.data_bytes)
    prefix = "" if flavour == "buildkit" else f"{PACKAGE}/"
    (root / "CMakeLists.txt").write_text(CMAKELISTS.format(package=PACKAGE, upper=PACKAGE.upper(), prefix=prefix))
    (root / PACKAGE / "__init__.py").write_text('"""A generated PyTorch-shaped package (benchmarks/scale.py)."""\n')
    if flavour == "buildkit":
        (root / "pyproject.toml").write_text(BUILDKIT_PYPROJECT)
        (root / "setup.py").write_text("from buildkit import setup\n\nsetup()\n")
    else:
        (root / "pyproject.toml").write_text(SKBUILD_PYPROJECT)
    return root


def write_data(path: Path, size: int) -> None:
    """Seeded random bytes: real bytes on disk that deflate cannot shrink, like model weights."""
    rng = random.Random(14)
    with path.open("wb") as handle:
        for start in range(0, size, DATA_CHUNK):
            handle.write(rng.randbytes(min(DATA_CHUNK, size - start)))


def runs_of(command: list[str], cwd: Path, env: dict[str, str], runs: int,
            before: Callable[[], None] | None = None, pause: float = 0.0) -> list[float]:
    """``runs`` timings of ``command``; ``before`` runs untimed ahead of each, and each
    run waits ``pause`` seconds first (the page cache and the CPU's clocks settle as
    they do between a developer's commands)."""
    seconds = []
    for _ in range(runs):
        time.sleep(pause)
        if before:
            before()
        seconds.append(timed(command, cwd, env))
    return seconds


def timed_with_output(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(command)}\n{(result.stdout + result.stderr)[-3000:]}")
    return elapsed, result.stdout + result.stderr


def zip_seconds(tree: Path, archive_path: Path) -> float:
    """The packaging floor: Python's zipfile, one thread, over every file of the package
    folder, each member compressed as buildkit's wheel writer compresses it (it deflates
    every member at zlib's default level, what wheels have always used)."""
    start = time.perf_counter()
    with zipfile.ZipFile(archive_path, "w") as archive:
        for path in sorted(tree.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(tree.parent), compress_type=DEFLATED, compresslevel=DEFAULT_LEVEL)
    elapsed = time.perf_counter() - start
    archive_path.unlink()
    return elapsed


def new_venv(path: Path, wheelhouse: Path, requirements: list[str], with_pip: bool) -> Path:
    """A venv holding ``requirements`` from ``wheelhouse`` only; returns its python.  A
    smoke run's venvs have no pip of their own: ensurepip is most of a venv's cost."""
    python = make_venv(path, with_pip=with_pip)
    pip_into(python, wheelhouse, "install", "-q", *requirements)
    return python


def pip_command(python: Path) -> list[str]:
    """pip for the venv of ``python``: its own, or in a pip-less (smoke) venv this
    interpreter's pip pointed at it, which costs one more interpreter start."""
    if (python.parent / "pip").exists():
        return [str(python), "-m", "pip"]
    return [sys.executable, "-m", "pip", "--python", str(python)]


def skbuild_python(work: Path, with_pip: bool) -> tuple[Path, Path] | None:
    """A venv with scikit-build-core, cmake and ninja, and the folder of wheels it came
    from; None (with one line saying why) when they cannot be had."""
    try:
        wheels = reference_requirements()
    except IndexUnreachable as error:
        print(f"scikit-build-core rows skipped: {error}", file=sys.stderr)
        return None
    return new_venv(work / "skbuild-venv", wheels, ["scikit-build-core", "cmake", "ninja"], with_pip), wheels


def environment(python: Path, wheelhouse: Path, jobs: int | None) -> dict[str, str]:
    """The activated venv of ``python``, pip limited to ``wheelhouse``, no compiler cache
    (a cache hit on a touched file would measure the cache), bytecode cached as in a
    user's shell."""
    env = venv_env(python, wheelhouse)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if jobs:
        env["MAX_JOBS"] = env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(jobs)
    return env


def archive_write(output: str) -> tuple[float, str]:
    """The seconds a wheel build's archive write took and its whole report, from the
    line buildkit prints: `packed NAME: N files, X MB into Y MB in S s (R MB/s, T threads)`."""
    found = re.search(r"packed (\S+: [\d,]+ files, .* in ([\d.]+) s \(.*\))", output)
    if found is None:
        raise SystemExit(f"benchmark: the wheel build printed no packing report\n{output[-3000:]}")
    return float(found.group(2)), found.group(1)


def build_passes(output: str) -> int:
    """How many build passes a `buildkit develop` ran: each ends with one summary line."""
    return output.count("buildkit: done in ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tus", type=int, default=1500, help="translation units (default 1500)")
    parser.add_argument("--headers", type=int, default=8000, help="installed headers (default 8000)")
    parser.add_argument("--data-mb", type=float, default=300, help="package data file in MB (default 300)")
    parser.add_argument("--growth", default="60,1500,3000",
                        help="translation-unit counts for the no-op growth rows (default 60,1500,3000)")
    parser.add_argument("--runs", type=int, default=7, help="runs per quick row (default 7)")
    parser.add_argument("--heavy-runs", type=int, default=3,
                        help="runs per row that packs or copies the data file (default 3)")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between the spaced no-op runs")
    parser.add_argument("--jobs", type=int, help="MAX_JOBS / CMAKE_BUILD_PARALLEL_LEVEL for the builds")
    parser.add_argument("--smoke", action="store_true",
                        help="20 TUs, 50 headers, 1 MB, 3 runs, growth 10,40, pip-less venvs; nothing judged (for CI)")
    parser.add_argument("--no-peer", action="store_true", help="skip the scikit-build-core rows")
    parser.add_argument("--wheelhouse", type=Path, help="a wheelhouse holding this checkout's buildkit wheel")
    parser.add_argument("--before", type=Path, metavar="WHEELHOUSE",
                        help="only the no-op develop, this checkout's against the buildkit wheel in WHEELHOUSE "
                             "(an earlier commit's), the two taking turns in one run")
    parser.add_argument("--keep", action="store_true", help="keep the generated projects and venvs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.tus, args.headers, args.data_mb, args.growth = 20, 50, 1, "10,40"
        args.runs, args.heavy_runs, args.pause = 3, 1, 0.5
    try:
        growth = [int(count) for count in args.growth.split(",")]
    except ValueError:
        parser.error(f"--growth takes comma-separated counts, not {args.growth!r}")
    if not any(shutil.which(name) for name in (os.environ.get("CXX", ""), "c++", "g++", "clang++") if name):
        raise SystemExit("benchmarks/scale.py: no C++ compiler found (CXX, c++, g++ or clang++ on PATH)")
    size = Size(args.tus, args.headers, int(args.data_mb * 1e6))

    started, load_before = time.perf_counter(), os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="buildkit-scale-"))
    print(f"benchmarks/scale.py: {size.describe()}; working in {work}", flush=True)
    try:
        if args.before:
            return compare_noop(work, size, args)
        rows, passes, peer_rows, growth_rows = measure(work, size, growth, args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nbenchmarks/scale.py: {size.describe()}; Python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, "
          f"{time.perf_counter() - started:.0f} s in all\n")
    report(rows | peer_rows, passes, growth_rows, judged=not args.smoke)
    return 0


def compare_noop(work: Path, size: Size, args) -> int:
    """The no-op `buildkit develop` of one generated project built by each of two buildkits
    (this checkout's and the one in ``args.before``), in venvs and copies of their own,
    timed in turns so that the machine's load falls on both alike."""
    sides = {"before": args.before, "after": args.wheelhouse or make_wheelhouse(work / "wheelhouse")}
    setups = {}
    for side, wheelhouse in sides.items():
        python = new_venv(work / f"venv-{side}", wheelhouse,
                          ["setuptools-buildkit", "setuptools", "wheel", "cmake", "ninja"], with_pip=False)
        env = environment(python, wheelhouse, args.jobs)
        project = generate(work / side, size, "buildkit")
        develop = [str(python), "-m", "buildkit", "develop", "."]
        timed(develop, project, env)  # the cold build
        timed(develop, project, env)  # the first no-op writes what later ones read
        setups[side] = (develop, project, env)
    seconds: dict[str, list[float]] = {side: [] for side in sides}
    for run in range(args.runs):
        for side in sides if run % 2 == 0 else reversed(list(sides)):
            seconds[side] += runs_of(*setups[side], 1)
    before, after = (statistics.median(seconds[side]) for side in sides)
    print(f"\nbenchmarks/scale.py --before: {size.describe()}; no-op `buildkit develop`, median of {args.runs} runs "
          f"each, taking turns; load average {os.getloadavg()[0]:.2f} at the end")
    for side in sides:
        low, high = min(seconds[side]), max(seconds[side])
        print(f"  {side:7} {statistics.median(seconds[side]):.3f} s  ({low:.3f}-{high:.3f})")
    print(f"  after / before: {after / before:.2f} (issue 25's budget: within 10 %)")
    return 0


def measure(work: Path, size: Size, growth: list[int], args) -> tuple[dict[str, Row], int, dict[str, Row], list]:
    """Every row, in an order that keeps them apart: pip's editable installs come after
    the other rows of the project, because the finder they leave is paid for by every
    later interpreter start, and are uninstalled before the growth rows."""
    wheelhouse = args.wheelhouse or make_wheelhouse(work / "wheelhouse")
    python = new_venv(work / "buildkit-venv", wheelhouse,
                      ["setuptools-buildkit", "setuptools", "wheel", "cmake", "ninja"], with_pip=not args.smoke)
    env = environment(python, wheelhouse, args.jobs)
    project = generate(work / "buildkit", size, "buildkit")
    py, ninja = str(python), str(python.parent / "ninja")
    develop = [py, "-m", "buildkit", "develop", "."]
    rows: dict[str, Row] = {}

    def add(name: str, seconds: list[float]) -> None:
        rows[name] = Row(name, seconds)
        print(f"  {name}: {statistics.median(seconds):.3f} s", flush=True)

    cold, output = timed_with_output(develop, project, env)
    add("cold: buildkit develop", [cold])
    passes = build_passes(output)
    timed([py, "setup.py", "develop"], project, env)  # every cache warm once

    add("floor: ninja -C build/{soabi} (no-op)", runs_of([ninja, "-C", BUILD_FOLDER], project, env, args.runs))
    add("floor: python -c pass", runs_of([py, "-c", "pass"], project, env, args.runs))
    add("floor: python -c 'import setuptools'", runs_of([py, "-c", "import setuptools"], project, env, args.runs))
    add("floor: zip the package folder (zipfile, 1 thread)",
        [zip_seconds(project / PACKAGE, work / "floor.zip") for _ in range(args.heavy_runs)])

    add(f"no-op: buildkit develop, {args.pause:g} s apart", runs_of(develop, project, env, args.runs, pause=args.pause))
    add("no-op: buildkit develop, back to back", runs_of(develop, project, env, args.runs))
    add("no-op: python setup.py develop", runs_of([py, "setup.py", "develop"], project, env, args.runs))

    header = project / "include" / header_path(0)
    unit = project / "src" / "unit00000.cpp"
    add("touch one installed header: buildkit develop", runs_of(develop, project, env, args.runs, touch(header)))
    add("touch one installed header: ninja alone", runs_of([ninja, "-C", BUILD_FOLDER], project, env, args.runs,
                                                           touch(header)))
    add("touch one .cpp: buildkit develop", runs_of(develop, project, env, args.runs, touch(unit)))
    add("touch one .cpp: ninja alone", runs_of([ninja, "-C", BUILD_FOLDER], project, env, args.runs, touch(unit)))
    timed(develop, project, env)  # install what ninja alone built

    dist = work / "dist"
    wheel = [*pip_command(python), "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", str(dist), "."]
    backend = [py, "-c", f"import buildkit.build_meta as backend; backend.build_wheel({str(dist)!r})"]
    add("wheel: pip wheel --no-build-isolation", runs_of(wheel, project, env, args.heavy_runs,
                                                         lambda: shutil.rmtree(dist, ignore_errors=True)))
    backend_seconds, archive_seconds, packed = [], [], ""
    for _ in range(args.heavy_runs):
        shutil.rmtree(dist, ignore_errors=True)
        seconds, output = timed_with_output(backend, project, env)
        backend_seconds.append(seconds)
        archive, packed = archive_write(output)
        archive_seconds.append(archive)
    add("wheel: the backend's build_wheel alone", backend_seconds)
    add(ARCHIVE_ROW, archive_seconds)
    print(f"  packed {packed}", flush=True)
    shutil.rmtree(dist, ignore_errors=True)

    pip_editable = [*pip_command(python), "install", "-q", "--no-build-isolation", "--no-deps", "-e", "."]
    timed(pip_editable, project, env)  # the first one replaces buildkit's registration with pip's
    add("no-op: pip install --no-build-isolation -e . (buildkit)", runs_of(pip_editable, project, env,
                                                                           args.heavy_runs))
    # Back to buildkit's own registration for the growth rows (in a pip-less venv buildkit
    # could not replace pip's: it uninstalls with the venv's pip).
    timed([*pip_command(python), "uninstall", "-q", "-y", PACKAGE], project, env)
    peer_rows = {} if args.no_peer else measure_skbuild(work, size, args)
    for name, row in peer_rows.items():
        print(f"  {name}: {row.median:.3f} s", flush=True)

    growth_rows = []
    for count in growth:
        grown = generate(work / f"growth-{count}", Size(count, count, 1_000_000), "buildkit")
        cold_seconds = timed(develop, grown, env)
        no_op = Row(f"no-op: buildkit develop, {count:,} TUs", runs_of(develop, grown, env, args.runs))
        print(f"  {no_op.name}: {no_op.median:.3f} s (cold {cold_seconds:.1f} s)", flush=True)
        growth_rows.append((count, cold_seconds, no_op))
        shutil.rmtree(grown)
    return rows, passes, peer_rows, growth_rows


def measure_skbuild(work: Path, size: Size, args) -> dict[str, Row]:
    found = skbuild_python(work, with_pip=not args.smoke)
    if found is None:
        return {}
    python, wheels = found
    env = environment(python, wheels, args.jobs)
    project = generate(work / "skbuild", size, "skbuild")
    install = [*pip_command(python), "install", "-q", "--no-build-isolation", "--no-deps", "-e", "."]
    cold = Row("cold: scikit-build-core pip install -e .", [timed(install, project, env)])
    no_op = Row("no-op: pip install --no-build-isolation -e . (scikit-build-core)",
                runs_of(install, project, env, args.heavy_runs))
    shutil.rmtree(project)
    return {row.name: row for row in (cold, no_op)}


def report(rows: dict[str, Row], passes: int, growth_rows: list, judged: bool) -> None:
    width = max(len(name) for name in rows)
    print(f"  {'measurement':<{width}}  {'median':>9}  range")
    for row in rows.values():
        print(f"  {row.name:<{width}}  {row.median:7.3f} s  {row.spread()}")

    def median(name: str) -> float:
        return rows[name].median

    ninja_noop, python_start = median("floor: ninja -C build/{soabi} (no-op)"), median("floor: python -c pass")
    develop_limit = max(0.15, 1.5 * (ninja_noop + python_start))
    # The backend call and a no-op develop share the interpreter start, buildkit's import
    # and the up-to-date check; what the backend spends beyond them is packaging.
    packaging = median("wheel: the backend's build_wheel alone") - median("no-op: buildkit develop, back to back")
    checks = [(row.name, row.median, develop_limit, "max(0.15 s, 1.5 x (ninja no-op + python -c pass))")
              for row in rows.values() if row.name.startswith("no-op: buildkit develop")]
    checks += [
        ("no-op: python setup.py develop", median("no-op: python setup.py develop"),
         1.5 * (median("floor: python -c 'import setuptools'") + ninja_noop), "1.5 x (import setuptools + ninja no-op)"),
        ("touch one installed header", median("touch one installed header: buildkit develop"),
         median("touch one installed header: ninja alone") + 0.15, "ninja alone + 0.15 s"),
        ("touch one .cpp", median("touch one .cpp: buildkit develop"),
         median("touch one .cpp: ninja alone") + 0.15, "ninja alone + 0.15 s"),
        ("wheel packaging (backend - no-op develop)", packaging,
         0.8 * median("floor: zip the package folder (zipfile, 1 thread)"), "0.8 x single-thread zip"),
    ]
    peer = rows.get("no-op: pip install --no-build-isolation -e . (scikit-build-core)")
    if peer:
        checks.append(("no-op: pip install -e . (buildkit)", median("no-op: pip install --no-build-isolation -e . "
                                                                     "(buildkit)"), 0.5 * peer.median,
                       "0.5 x scikit-build-core's"))
    width = max(len(name) for name, *_ in checks)
    print(f"\n  {'target':<{width}}  {'value':>9}  {'limit':>9}  {'ratio':>6}  rule")
    for name, value, limit, rule in checks:
        verdict = ("PASS" if value <= limit else "FAIL") if judged else "-"
        print(f"  {name:<{width}}  {value:7.3f} s  {limit:7.3f} s  {value / limit:5.2f}x  {rule}  {verdict}")
    one_pass = ("PASS" if passes == 1 else "FAIL") if judged else "-"
    print(f"  {'cold: buildkit develop build passes':<{width}}  {passes:>9}  {1:>9}  {'':>6}  one build pass  {one_pass}")
    floor = median("floor: zip the package folder (zipfile, 1 thread)")
    print(f"\n  wheel packaging vs the single-thread zip floor ({floor:.3f} s, the same method per member): "
          f"{packaging / floor:.2f}x (target <= 0.80x); the archive write alone "
          f"{median(ARCHIVE_ROW) / floor:.2f}x")

    if growth_rows:
        smallest = growth_rows[0][2].median
        print(f"\n  {'no-op growth':<32}  {'cold':>8}  {'no-op':>9}  vs {growth_rows[0][0]:,} TUs  range")
        for count, cold, row in growth_rows:
            print(f"  {row.name:<32}  {cold:6.1f} s  {row.median:7.3f} s  {row.median / smallest:5.2f}x  {row.spread()}")


if __name__ == "__main__":
    raise SystemExit(main())
