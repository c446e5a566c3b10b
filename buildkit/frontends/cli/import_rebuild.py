"""``python -P -m buildkit.frontends.cli.import_rebuild ROOT BUILD_DIR NAME REPORT_FD``: an
editable install's rebuild on import, started by :mod:`buildkit.editable_rebuild`.

It is ``buildkit build ROOT`` as an importing program needs it: the no-op first (the lean
path of :mod:`buildkit.frontends.cli.entry`), the whole command when the no-op cannot answer;
nothing printed when nothing was built, the progress when it builds.  A failure is not the
console's box but its first error (:attr:`buildkit.errors.BuildFailedError.first_error`),
written to ``REPORT_FD``, for the importing process to raise.
"""

from __future__ import annotations

import os
import sys

from buildkit._util import console
from buildkit.frontends import noop_develop

TYPE_CHECKING = False  # typing and pathlib cost the no-op ~14 ms to import (measured): it goes without
if TYPE_CHECKING:
    from typing import TextIO


def main(argv: list[str]) -> int:
    root, build_dir, name, report_fd = argv
    with os.fdopen(int(report_fd), "w", encoding="utf-8") as report:
        console.stay_quiet_when_up_to_date()
        try:
            _rebuild(root, build_dir, name)
        except (Exception, KeyboardInterrupt) as error:
            return _failed(error, report)
    return 0


def _rebuild(root: str, build_dir: str, name: str) -> None:
    if not os.path.isdir(build_dir):
        console.info(f"the build folder {build_dir} is gone: building {name} again before its import")
    if noop_develop.run_if_current(root, register=False, build_dir=build_dir):
        return
    # Start-up cost: the whole command (~0.17 s of imports) only where the no-op cannot answer.
    from pathlib import Path

    from buildkit.frontends.cli.main import build_in_place

    build_in_place(Path(root), register=False)


def _failed(error: BaseException, report: TextIO) -> int:
    """Report a failure to the importing process; its exit status."""
    # Start-up cost: buildkit's error types (~3 ms, with traceback) load only when something failed.
    from buildkit.errors import INTERRUPTED, BuildFailedError, BuildkitError, ReportedExit, reporting_errors

    if isinstance(error, BuildkitError):
        # Without what only a terminal has room for: a failed step's first error, without the failing command.
        first = error.first_error if isinstance(error, BuildFailedError) and error.first_error else error.message
        log = error.log_path and f"Full log: {error.log_path}"
        report.write("\n".join(part for part in (first, error.hint, log) if part))
        return error.exit_code
    if isinstance(error, KeyboardInterrupt):
        report.write(INTERRUPTED)
        return 130

    def again() -> None:
        raise error

    try:  # a failure buildkit cannot explain: its traceback, said to be a bug, above the import's error
        reporting_errors(again)
    except ReportedExit as stop:
        return stop.code
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
