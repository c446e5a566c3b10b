"""The ``buildkit`` console script and ``python -m buildkit``.

A no-op ``buildkit develop`` must cost little more than ninja's own no-op, so this
module answers one before the rest of buildkit is imported
(:mod:`buildkit.frontends.noop_develop`); every other command, and a develop with
anything to do, goes to :mod:`buildkit.frontends.cli.main`.
"""

from __future__ import annotations

import sys

from buildkit.errors import exit_on_error
from buildkit.frontends import noop_develop

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op path goes without
if TYPE_CHECKING:
    from collections.abc import Sequence


@exit_on_error
def _no_op(root: str, register: bool) -> int:
    return 0 if noop_develop.run_if_current(root, register) else -1


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if (wanted := noop_develop.request(args)) is not None and (code := _no_op(*wanted)) != -1:
        return code  # 0: nothing to do; else ninja failed, and its error is reported
    # Start-up cost: the full command line imports most of buildkit (~0.17 s of CPU on a
    # 2-core machine, measured with -X importtime), which a no-op develop never needs.
    from buildkit.frontends.cli.main import main as full_command

    return full_command(args)
