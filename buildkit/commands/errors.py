"""Turn a BuildkitError into a boxed message and a non-zero exit, without a traceback."""

from __future__ import annotations

import sys
from typing import Callable, TypeVar

from .. import console
from ..errors import BuildkitError

T = TypeVar("T")


def run_reporting_errors(action: Callable[[], T]) -> T:
    try:
        return action()
    except BuildkitError as error:
        console.report_error(error)
        raise SystemExit(error.exit_code) from None
    except KeyboardInterrupt:
        console.warn("interrupted; rerun the same command to continue where the build stopped.")
        raise SystemExit(130) from None


def exit_on_error(main: Callable[..., int]) -> Callable[..., int]:
    """Decorator for CLI entry points: errors become messages and exit codes."""

    def wrapper(*args, **kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except BuildkitError as error:
            console.report_error(error)
            return error.exit_code
        except KeyboardInterrupt:
            console.warn("interrupted; rerun the same command to continue where the build stopped.")
            return 130

    wrapper.__name__ = main.__name__
    wrapper.__doc__ = main.__doc__
    return wrapper


def fail(message: str) -> None:  # pragma: no cover - used by scripts
    print(message, file=sys.stderr)
    raise SystemExit(1)
