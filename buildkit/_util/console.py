"""All of buildkit's terminal output goes through here.

On a terminal this uses rich (colours, boxed warnings, progress); without one
(CI, pipes, ``CI=true``) it prints plain lines with no control codes, so logs stay
readable.  Messages go to stderr; a command's own result (``buildkit init``'s listing,
``buildkit docs``' verdict) goes to stdout through :func:`output`.  Nothing else in
buildkit calls ``print``.
"""

from __future__ import annotations

import os
import sys
import time
from functools import cache

from buildkit._util.switches import switch_word, verbose_setting

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op develop goes without
if TYPE_CHECKING:  # rich costs ~20 ms to import: only load it when something is printed
    from collections.abc import Iterable, Sequence
    from typing import TextIO

    from rich.console import Console
    from rich.table import Table


def is_interactive() -> bool:
    if switch_word(os.environ.get("CI", "")):  # CI=true (or 1, yes...): the switches' one word list
        return False
    if os.environ.get("NO_COLOR") is not None or os.environ.get("TERM") == "dumb":
        return False
    return sys.stderr.isatty()


@cache
def _console(interactive: bool) -> Console:
    # rich costs ~20 ms to import: loaded only when something is printed.
    from rich.console import Console

    if interactive:
        return Console(stderr=True, highlight=False)
    # Plain mode: no colour, no cursor movement, wide enough that tables don't wrap
    # into unreadable columns in CI logs.
    return Console(stderr=True, highlight=False, no_color=True, force_terminal=False,
                   force_interactive=False, width=max(100, _env_width()), soft_wrap=True,
                   emoji=False, color_system=None)


def _env_width() -> int:
    try:
        return int(os.environ.get("COLUMNS", "120"))
    except ValueError:
        return 120


def console() -> Console:
    return _console(is_interactive())


def plain(line: str) -> None:
    """One line to stderr without rich: the no-op path's only output."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def output(line: str, stream: TextIO | None = None) -> None:
    """One line of a command's result, to stdout (or ``stream``) where a pipe can take it."""
    stream = stream or sys.stdout
    stream.write(line + "\n")
    stream.flush()


# The SGR codes rich writes for the labels' styles.
_LABEL_CODES = {"bold cyan": "1;36", "bold yellow": "1;33"}


def _labelled(label: str, style: str, message: str) -> None:
    """``label: message`` on a terminal, the message as text: ``[tool.buildkit]`` or
    ``pkg[extra]`` in it are not rich markup."""
    if os.name == "posix" and _console.cache_info().currsize == 0:
        # Nothing has printed through rich yet (so no live display to keep clear of): one
        # coloured word costs no rich import (~20 ms, most of a no-op develop's own time).
        plain(f"\x1b[{_LABEL_CODES[style]}m{label}\x1b[0m: {message}")
        return
    from rich.text import Text  # rich: loaded only when printed (see console())

    console().print(Text.assemble((label, style), ": ", message))


def info(message: str) -> None:
    if is_interactive():
        _labelled("buildkit", "bold cyan", message)
    else:
        plain(f"buildkit: {message}")


class _NoWork:
    """Whether a run that built nothing says so: an editable install's rebuild on import
    (``frontends/cli/import_rebuild.py``) prints only when it builds."""

    announced = True


def stay_quiet_when_up_to_date() -> None:
    """From now on, in this process, :func:`up_to_date` prints nothing."""
    _NoWork.announced = False


class _Command:
    """When this process's command started: the process's own start where the system says it
    (the interpreter's start-up and imports are most of a no-op's time), else this module's
    import, which every command's entry point makes first."""

    imported = time.perf_counter()
    started: float | None = None


# A process that imported buildkit later than this after it started is a longer-lived one (a
# notebook, a test run) running a command in-process: its command starts at the import.
_START_UP_AT_MOST = 5.0


def _process_started() -> float | None:
    """The process's start on :func:`time.perf_counter`'s clock (Linux: ``/proc/self/stat``'s
    start time, clock ticks since boot, against the boot-time clock: to a tick, 10 ms); None
    where unknown."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])  # field 22, after the command's name
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):  # not Linux, or no /proc
        return None
    return time.perf_counter() - age


def command_seconds() -> float:
    """The command's wall time so far: what its result line says, whatever ran before the
    build (the interpreter's start, a project's setup.py importing torch, reading the project)
    or after it."""
    if _Command.started is None:
        process = _process_started()
        near = process is not None and 0 <= _Command.imported - process <= _START_UP_AT_MOST
        _Command.started = process if near and process is not None else _Command.imported
    return time.perf_counter() - _Command.started


def up_to_date() -> None:
    """The one line of a run that found nothing to build, install or run."""
    if _NoWork.announced:
        info(f"up to date ({command_seconds():.2f} s)")


def is_verbose() -> bool:
    return verbose_setting() is True  # the options' reading; a word they refuse stops the run there


def detail(message: str) -> None:
    """A line that only matters when something goes wrong or VERBOSE=1."""
    if is_verbose():
        plain(f"buildkit: {message}")


def warn(message: str) -> None:
    if is_interactive():
        _labelled("buildkit warning", "bold yellow", message)
    else:
        plain(f"buildkit warning: {message}")


def boxed(title: str, message: str, style: str = "yellow") -> None:
    """A boxed recommendation or warning; a plain framed block without a terminal."""
    # rich: loaded only when printed (see _console)
    from rich import box
    from rich.panel import Panel
    from rich.text import Text

    if is_interactive():
        console().print(Panel(Text(message), title=title, border_style=style, expand=False))
        return
    # Plain logs: an ASCII frame at most 100 columns wide; rich wraps long lines
    # (paths, hints) inside it instead of letting them run past the right edge.
    longest = max((len(line) for line in message.splitlines()), default=0)
    console().print(Panel(Text(message), title=title, title_align="left", box=box.ASCII, expand=False,
                          width=min(max(longest, len(title)) + 4, 100)), soft_wrap=False)


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Table:
    from rich.table import Table  # rich: loaded only when printed (see _console)
    from rich.text import Text

    tbl = Table(title=title, show_lines=False, box=None)
    for col in columns:
        tbl.add_column(col, overflow="fold")
    for row in rows:
        # Text, not markup: a cell like `pip install 'pkg[extra]'` keeps its brackets.
        tbl.add_row(*(Text("" if cell is None else str(cell)) for cell in row))
    return tbl


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    console().print(table(title, columns, rows))
