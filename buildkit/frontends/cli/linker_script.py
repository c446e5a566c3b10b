"""``buildkit linker-script``: write the prioritized-text linker script by hand."""

from __future__ import annotations

import argparse

from buildkit._util import console
from buildkit.builder.toolchain.linker_script import write_linker_script
from buildkit.errors import exit_on_error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="buildkit linker-script",
        description="Write a GNU ld script that places the listed functions first in .text.",
    )
    parser.add_argument("symbols_file", metavar="SYMBOLS_FILE",
                        help="file with one symbol name per line ('#' starts a comment)")
    parser.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                        help="where to write the linker script")
    parser.add_argument("--ld", default="ld", help="GNU ld to take the default script from")
    args = parser.parse_args(argv)
    return _write(args)


@exit_on_error
def _write(args: argparse.Namespace) -> int:
    path = write_linker_script(args.symbols_file, args.output, args.ld)
    console.info(f"wrote linker script {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
