"""The one error type buildkit raises for problems a user can fix.

A ``BuildkitError`` carries a one-paragraph message that says what went wrong and
what to do.  Front ends (setup.py, the CLI, the PEP 517 hooks) print it without a
Python traceback and exit non-zero, through :func:`reporting_errors` (setup.py, the
PEP 517 hooks) or its decorator form :func:`exit_on_error` (the CLI's entry points).
"""

from __future__ import annotations

import functools
import traceback

from buildkit._util import console

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op develop goes without
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

INTERRUPTED = "interrupted; rerun the same command to continue where the build stopped."


class BuildkitError(Exception):
    """A user-facing failure: ``message`` says what happened, ``hint`` what to do."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None, *, log_path: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.log_path = log_path

    def __str__(self) -> str:
        parts = [self.message]
        if self.hint:
            parts.append(self.hint)
        if self.log_path:
            parts.append(f"Full log: {self.log_path}")
        return " ".join(parts)


class ConfigError(BuildkitError):
    """Bad build options: an environment variable, a config setting or a [tool.buildkit] key."""


class ModeConflictError(ConfigError):
    """Two wheel modes requested at once."""


class ToolchainError(BuildkitError):
    """A required tool (cmake, ninja, a compiler, nvcc) is missing or unusable."""


class BuildFailedError(BuildkitError):
    """A configure, build or install step failed."""

    def __init__(self, message: str, hint: str | None = None, *, log_path: str | None = None,
                 returncode: int | None = None, command: list[str] | None = None, first_error: str | None = None):
        super().__init__(message, hint, log_path=log_path)
        self.returncode = returncode
        self.command = command
        # The message's first part alone: where the first error is, with its lines (without
        # the failing command), for a report with no room for more (a rebuild on import's).
        self.first_error = first_error


def report(error: BuildkitError) -> None:
    """Print the error as one boxed paragraph, without a traceback."""
    body = error.message
    if error.hint:
        body += "\n\n" + error.hint
    if error.log_path:
        body += f"\n\nFull log: {error.log_path}"
    console.boxed("buildkit error", body, style="red")


class ReportedExit(SystemExit):
    """The exit :func:`reporting_errors` raises after printing the message: any other
    ``SystemExit`` (setuptools' own "interrupted", a script's exit) keeps its meaning."""

    code: int  # always raised with an exit status


def reporting_errors(action: Callable[[], T]) -> T:
    """Run ``action``; a BuildkitError or Ctrl-C becomes a message and ``SystemExit``."""
    try:
        return action()
    except BuildkitError as error:
        report(error)
        raise ReportedExit(error.exit_code) from None
    except KeyboardInterrupt:
        console.warn(INTERRUPTED)
        raise ReportedExit(130) from None
    except Exception:
        # Not a failure buildkit knows how to name: the traceback is what a report needs,
        # so it is shown whole, and said to be a bug rather than left to look like one's own mistake.
        traceback.print_exc()
        console.boxed("buildkit bug", "buildkit stopped on an error it does not know how to explain (the "
                      "traceback above). This is a bug in buildkit or in a tool it ran: please report it with "
                      "the traceback and the command you ran.", style="red")
        raise ReportedExit(1) from None


def exit_on_error(main: Callable[..., int]) -> Callable[..., int]:
    """Decorator for CLI entry points: :func:`reporting_errors`, with the exit code returned."""

    @functools.wraps(main)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return reporting_errors(lambda: main(*args, **kwargs))
        except ReportedExit as stop:
            return stop.code

    return wrapper
