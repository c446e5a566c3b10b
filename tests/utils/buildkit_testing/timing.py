"""Timing a command for the benchmarks: its wall time (and the CPU time it and the processes
it waited for used), a failure stopping the benchmark; the median over runs, and the edit
made before each (rebuild.py, scale.py, torch_extension.py, import_rebuild.py)."""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def measured(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall time, CPU time) of ``command``: the CPU time, user and system, of the command and
    every process it waited for, which a machine busy with other work changes less than the
    wall time.  A failed run ends the benchmark with its output's tail."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(command)}\n{result.stderr[-3000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    """The wall time of ``command`` (see :func:`measured`)."""
    return measured(command, cwd, env)[0]


def median(command: list[str], cwd: Path, env: dict[str, str], runs: int,
           before: Callable[[], None] | None = None) -> float:
    """The median of ``runs`` timings of ``command``, ``before`` run (untimed) ahead of each."""
    samples = []
    for _ in range(runs):
        if before:
            before()
        samples.append(timed(command, cwd, env))
    return statistics.median(samples)


def touch(path: Path) -> Callable[[], None]:
    """An edit of ``path`` to run before a timing: a line break appended."""
    def action() -> None:
        # A real content change: ninja compares timestamps, ccache would compare content.
        with path.open("a") as handle:
            handle.write("\n")
    return action


def token_flip(path: Path, tokens: tuple[str, str]) -> Callable[[], None]:
    """An edit of ``path`` to run before a timing: ``tokens[0]`` replaced by ``tokens[1]``,
    and back the next time: a real one-token change of the object each time."""
    def action() -> None:
        text = path.read_text()
        old, new = tokens if tokens[0] in text else tokens[::-1]
        if old not in text:
            raise SystemExit(f"benchmark edit: {path} holds neither {tokens[0]!r} nor {tokens[1]!r}")
        path.write_text(text.replace(old, new, 1))
    return action


@contextmanager
def scratch_folder(prefix: str, *, keep: bool = False) -> Iterator[Path]:
    """A new temporary folder for a benchmark's projects and venvs, removed afterwards
    unless ``keep`` (the scripts' ``--keep``)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
