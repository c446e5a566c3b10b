"""The one error type buildkit raises for problems a user can fix.

A ``BuildkitError`` carries a one-paragraph message that says what went wrong and
what to do.  Front ends (setup.py, the CLI, the PEP 517 hooks) print it without a
Python traceback and exit non-zero; see :func:`buildkit.console.report_error`.
"""

from __future__ import annotations


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
                 returncode: int | None = None, command: list[str] | None = None):
        super().__init__(message, hint, log_path=log_path)
        self.returncode = returncode
        self.command = command
