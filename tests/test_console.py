"""Plain (CI) output: boxed messages fit their box, however long their lines."""

from __future__ import annotations

import subprocess
import sys

import pytest

from buildkit._util import console
from buildkit_testing.processes import unboxed

LONG_HINT = ("buildkit reads the project's name from [project] and its build settings from [tool.buildkit]; "
             "run `buildkit init` to create one, or point buildkit at the project folder /" + "x" * 120 + ".")


@pytest.mark.parametrize("message", ["short", LONG_HINT, f"first line\n\n{LONG_HINT}\nlast line"])
def test_a_plain_box_fits_its_frame(message: str, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CI", "true")
    console._console.cache_clear()  # the console reads the environment once
    console.boxed("buildkit error", message)
    lines = capsys.readouterr().err.splitlines()
    widths = {len(line) for line in lines}
    assert len(widths) == 1 and widths.pop() <= 100, lines
    assert lines[0].startswith("+") and all(line.startswith("|") and line.endswith("|") for line in lines[1:-1])
    # Nothing lost to the wrap (a token longer than the box is folded, hence no spaces).
    assert unboxed("\n".join(lines)).replace(" ", "") == "".join(message.split())
    assert "buildkit error" in lines[0]


def test_terminal_messages_keep_their_brackets(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """On a terminal rich prints them: `[tool.buildkit]` and `pkg[extra]` are text, not markup."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(console, "is_interactive", lambda: True)
    message = "set [tool.buildkit] wheel-exclude, or pip install 'setuptools-buildkit[wheels]'"
    console.info(message)
    console.warn(message)
    console.boxed("buildkit error", message)
    err = capsys.readouterr().err
    assert err.count("[tool.buildkit]") == 3 and err.count("setuptools-buildkit[wheels]") == 3, err


def test_a_terminal_line_before_anything_else_needs_no_rich(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The no-op develop's one line on a terminal: its label coloured as rich colours it, without
    rich's import; once rich prints (a progress display may be live), rich prints every line."""
    monkeypatch.setattr(console, "is_interactive", lambda: True)
    console._console.cache_clear()
    console.info("up to date (0.08 s)")
    console.warn("a [bracket] stays")
    assert capsys.readouterr().err == ("\x1b[1;36mbuildkit\x1b[0m: up to date (0.08 s)\n"
                                       "\x1b[1;33mbuildkit warning\x1b[0m: a [bracket] stays\n")
    console.console()  # rich in use from here on
    console.info("done")
    printed = capsys.readouterr().err
    assert "done" in printed and "\x1b[1;36m" not in printed  # rich's own (here: no colour, no terminal)
    console._console.cache_clear()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process's start is read from /proc")
def test_the_command_time_counts_from_the_process_start() -> None:
    """A result line's time is the whole command's: the interpreter's start-up before buildkit's
    import counts (a no-op's most), unless the import came long after it (a longer-lived
    process running a command in-process), where the command starts at the import."""
    measure = ("import time; time.sleep({sleep}); from buildkit._util import console; "
               "console._START_UP_AT_MOST = {at_most}; print(console.command_seconds())")
    soon = subprocess.run([sys.executable, "-c", measure.format(sleep=0.5, at_most=5.0)],
                          capture_output=True, text=True, check=True)
    assert 0.5 <= float(soon.stdout) < 5, soon.stdout
    late = subprocess.run([sys.executable, "-c", measure.format(sleep=0.5, at_most=0.2)],
                          capture_output=True, text=True, check=True)
    assert float(late.stdout) < 0.5, late.stdout
