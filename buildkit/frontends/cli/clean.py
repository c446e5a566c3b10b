"""``buildkit clean [PATH] [--all] [--dry-run]``: :mod:`buildkit.frontends.clean` from the command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from buildkit.builder.build_state import TORCH_PROJECT
from buildkit.config.drop_in import tool_settings
from buildkit.config.options import option_keys
from buildkit.errors import exit_on_error
from buildkit.frontends.clean import clean_project


def main(argv: Sequence[str] | None = None) -> int:
    """``buildkit clean [PATH] [--all] [--dry-run]``."""
    parser = argparse.ArgumentParser(prog="buildkit clean", description=(
        "Remove build outputs; with --all also what .gitignore lists. Never removes tracked files, "
        "virtual environments, VCS/IDE folders, folders marked with .buildkit-keep, or anything outside PATH."))
    parser.add_argument("path", nargs="?", default=".", help="project folder (default: the current one)")
    parser.add_argument("--all", "-a", action="store_true", help="also remove what .gitignore lists")
    parser.add_argument("--dry-run", "-n", action="store_true", help="list what would go; delete nothing")
    return _clean(parser.parse_args(argv))


@exit_on_error
def _clean(args: argparse.Namespace) -> int:
    clean_project(tool_settings(Path(args.path), option_keys(), TORCH_PROJECT), include_ignored=args.all,
                  dry_run=args.dry_run)
    return 0
