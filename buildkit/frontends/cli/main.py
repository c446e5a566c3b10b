"""The ``buildkit`` command line.

Subcommands that only drive CMake (develop, build) never import setuptools unless
something needs packaging; see :mod:`buildkit.frontends.develop`.  The other tools
are imported by name when asked for: together they cost ~35 ms to import (wheels
and audit most), which the no-op ``buildkit develop`` must not pay.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from buildkit._util import console
from buildkit.builder import build_output
from buildkit.config.invocation import Invocation
from buildkit.errors import exit_on_error
from buildkit.frontends import noop_finish
from buildkit.frontends.cli.docs import write_reference
from buildkit.frontends.develop import develop
from buildkit.project import Project

# Subcommands implemented by other modules' own ``main(argv)``: name -> (module, help).
DELEGATED: dict[str, tuple[str, str]] = {
    "doctor": ("buildkit.frontends.cli.doctor", "check the toolchain and print one table of findings and fixes"),
    "report": ("buildkit.frontends.cli.report", "slowest translation units and a Chrome trace of the last build"),
    "linker-script": ("buildkit.frontends.cli.linker_script",
                      "write a linker script that puts listed functions first in .text"),
    "clean": ("buildkit.frontends.cli.clean",
              "remove build outputs (never tracked files or anything outside the project)"),
    "wheels": ("buildkit.frontends.cli.wheels",
               "build, repair (auditwheel), audit and smoke-test the wheels CI publishes"),
    "init": ("buildkit.frontends.cli.init",
             "scaffold a new project: C++ library, Python package, tests, CI (--cuda, --split)"),
    "dist-cluster": ("buildkit.frontends.cli.dist_cluster",
                     "run a local sccache-dist cluster (scheduler + N build servers) to build through"),
}


def _invocation(command: str) -> Invocation:
    """A subcommand's invocation: develop and build build in place; no config settings on a
    command line (the environment and [tool.buildkit] carry the options)."""
    return Invocation((command,), builds=command in ("develop", "build"))


def _project_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", default=".", type=Path, help="project folder (default: .)")


@exit_on_error
def _develop(args: argparse.Namespace) -> int:
    build_in_place(args.path, register=True)
    return 0


@exit_on_error
def _build(args: argparse.Namespace) -> int:
    build_in_place(args.path, register=False)
    return 0


def build_in_place(root: Path, register: bool) -> Project:
    """The whole ``buildkit develop`` (``register``) or ``buildkit build`` of ``root``, and the
    record its next no-op reads."""
    command = "develop" if register else "build"
    with build_output.one_result_line():  # its time is the whole command's, setup.py's run included
        project = develop(root.resolve(), _invocation(command), register=register)
        if not project.stopped_after_configure:
            noop_finish.record(project, register)
    return project


@exit_on_error
def _options(args: argparse.Namespace) -> int:
    project = Project.load(args.path.resolve(), invocation=_invocation(args.command))
    console.console().print(project.options)
    return 0


@exit_on_error
def _docs(args: argparse.Namespace) -> int:
    changed = write_reference(args.output)
    console.output(f"{args.output}: {'updated' if changed else 'up to date'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="buildkit", description="Build CMake C++/CUDA Python projects.")
    sub = parser.add_subparsers(dest="command", required=True)
    commands: dict[str, Callable[[argparse.Namespace], int]] = {}
    for name, func, text in (("develop", _develop, "build in place and keep the editable install current"),
                             ("build", _build, "configure if needed, build and install into the package tree"),
                             ("options", _options, "print the resolved build options and where each came from")):
        p = sub.add_parser(name, help=text, description=text)
        _project_arg(p)
        p.set_defaults(func=func)
        commands[name] = func
    docs = sub.add_parser("docs", help="regenerate docs/configuration.md from the option tables")
    docs.add_argument("-o", "--output", type=Path, default=Path("docs/configuration.md"))
    docs.set_defaults(func=_docs)
    for name, (_, text) in DELEGATED.items():
        p = sub.add_parser(name, help=text, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        module = importlib.import_module(DELEGATED[argv[0]][0])
        code: int = module.main(argv[1:])
        return code
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
