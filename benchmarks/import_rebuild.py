"""What rebuild on import (``editable-rebuild = true``) adds to an import.

Two copies of tests/packages/rebuild_on_import (one C++ extension module of two files),
one with the setting and one without, each installed with ``pip install
--no-build-isolation -e .`` into a venv of its own holding buildkit from a local
wheelhouse (this checkout's wheel: ``--wheelhouse``, or one made here), as a user's
would; then ``python -c "import rebuildme"`` from an unrelated folder, the two installs
taking turns run by run, and the medians, their difference and their ratio, all measured
in this one run:

    python benchmarks/import_rebuild.py            # 15 runs per row
    python benchmarks/import_rebuild.py --smoke    # 3 runs in venvs that see this interpreter's
                                                   # buildkit: a quick check for CI, not judged

Rows: ``python -c pass`` (the floor); the import without the setting; with it, nothing
changed (the hook starts ``python -P -m buildkit.frontends.cli.import_rebuild``, which
answers with the no-op ``buildkit build``); with it and ``BUILDKIT_EDITABLE_REBUILD=0``
(the hook's own cost); and after touching one .cpp, the import that rebuilds against
``buildkit build`` then the import without the setting (the loop it replaces).
Target: nothing changed, the setting adds at most 0.15 s to the import.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from buildkit_testing.projects import copy_test_package
from buildkit_testing.timing import measured, timed, touch
from buildkit_testing.venvs import BUILDKIT_WITH_TOOLS, make_venv, make_wheelhouse, overlay_venv, pip_into, venv_env

TARGET_S = 0.15
IMPORT = ["-c", "import rebuildme"]


def taking_turns(rows: dict[str, Callable[[], tuple[float, float]]], runs: int) -> dict[str, tuple[float, float]]:
    """Each row's median wall and CPU times, the rows run one after the other in each round (a
    machine that slows down or speeds up during the run does so for all of them)."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
    for _ in range(runs):
        for name, measure in rows.items():
            samples[name].append(measure())
    return {name: (statistics.median(wall for wall, _ in values), statistics.median(cpu for _, cpu in values))
            for name, values in samples.items()}


def installed(work: Path, wheelhouse: Path | None, name: str, rebuild: bool) -> tuple[str, Path, dict[str, str]]:
    """A copy of the project, with or without the setting, installed editable into a venv of
    its own; its python, the copy and the environment to run it in (the activated venv, no
    compiler cache, bytecode cached as in a user's shell).  The venv holds buildkit and the
    build tools from ``wheelhouse``; without one (a smoke run) it sees this interpreter's."""
    project = copy_test_package("rebuild_on_import", work / name / "rebuild_on_import")
    pyproject = project / "pyproject.toml"
    setting = "editable-rebuild = true\n"
    text = pyproject.read_text()
    assert setting in text, "the test package no longer turns the setting on"
    if not rebuild:
        pyproject.write_text(text.replace(setting, ""))
    if wheelhouse is None:
        python, wheelhouse = overlay_venv(work / name / "venv"), work / "no-wheelhouse"
    else:
        python = make_venv(work / name / "venv", with_pip=False)
        pip_into(python, wheelhouse, "install", "-q", *BUILDKIT_WITH_TOOLS, "setuptools", "wheel")
    pip_into(python, wheelhouse, "install", "-q", "--no-build-isolation", "--no-deps", "-e", project)
    env = {k: v for k, v in venv_env(python, wheelhouse, CI="true", BUILDKIT_COMPILER_LAUNCHER="none").items()
           if k != "PYTHONDONTWRITEBYTECODE"}
    timed([str(python), *IMPORT], work, env)  # the first import after the install: its own full check
    return str(python), project, env


def touched(path: Path, then: Callable[[], tuple[float, float]]) -> Callable[[], tuple[float, float]]:
    """``then``, after an edit of ``path`` (untimed)."""
    edit = touch(path)

    def measure() -> tuple[float, float]:
        edit()
        return then()
    return measure


def one_after_the_other(*steps: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    times = [step() for step in steps]
    return sum(wall for wall, _ in times), sum(cpu for _, cpu in times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="3 runs, nothing judged (for CI)")
    parser.add_argument("--wheelhouse", type=Path, help="a wheelhouse holding this checkout's buildkit wheel")
    parser.add_argument("--keep", action="store_true", help="keep the projects and venvs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs = 3
    work = Path(tempfile.mkdtemp(prefix="buildkit-import-bench-"))
    try:
        # A smoke run's venvs see this interpreter's buildkit and tools: its figures are not judged.
        wheelhouse = None if args.smoke else args.wheelhouse or make_wheelhouse(work / "wheelhouse")
        with_python, with_project, env = installed(work, wheelhouse, "with", rebuild=True)
        without_python, without_project, without_env = installed(work, wheelhouse, "without", rebuild=False)
        off = {**env, "BUILDKIT_EDITABLE_REBUILD": "0"}
        quiet = taking_turns({
            "floor: python -c pass": lambda: measured([with_python, "-c", "pass"], work, env),
            "import, without the setting": lambda: measured([without_python, *IMPORT], work, without_env),
            "import, editable-rebuild, nothing changed": lambda: measured([with_python, *IMPORT], work, env),
            "import, editable-rebuild, BUILDKIT_EDITABLE_REBUILD=0": lambda: measured([with_python, *IMPORT], work,
                                                                                      off),
        }, args.runs)
        edited = taking_turns({
            "touch one .cpp: import, editable-rebuild": touched(
                with_project / "csrc" / "answer.cpp", lambda: measured([with_python, *IMPORT], work, env)),
            "touch one .cpp: buildkit build, then import, without the setting": touched(
                without_project / "csrc" / "answer.cpp", lambda: one_after_the_other(
                    lambda: measured([without_python, "-m", "buildkit", "build", str(without_project)], work,
                                     without_env),
                    lambda: measured([without_python, *IMPORT], work, without_env))),
        }, max(3, args.runs // 3))
        report({**quiet, **edited}, args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def report(rows: dict[str, tuple[float, float]], args: argparse.Namespace) -> None:
    print(f"\nbenchmarks/import_rebuild.py: median of {args.runs} runs ({max(3, args.runs // 3)} for the touch "
          f"rows), Python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f} at the end\n")
    width = max(len(name) for name in rows)
    print(f"  {'':<{width}}      wall       CPU")
    for name, (wall, cpu) in rows.items():
        print(f"  {name:<{width}}  {wall:7.3f} s  {cpu:6.3f} s")
    without_wall, without_cpu = rows["import, without the setting"]
    with_wall, with_cpu = rows["import, editable-rebuild, nothing changed"]
    off_wall, _ = rows["import, editable-rebuild, BUILDKIT_EDITABLE_REBUILD=0"]
    added = with_wall - without_wall
    print(f"\n  editable-rebuild, nothing changed: + {added:.3f} s over the import without it "
          f"({with_wall / without_wall:.2f} x); CPU + {with_cpu - without_cpu:.3f} s")
    print(f"  the hook alone (BUILDKIT_EDITABLE_REBUILD=0): + {off_wall - without_wall:.3f} s")
    if not args.smoke:
        print(f"\n  target: + at most {TARGET_S} s   {'yes' if added <= TARGET_S else 'NO'}")


if __name__ == "__main__":
    raise SystemExit(main())
