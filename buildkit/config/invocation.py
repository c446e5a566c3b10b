"""What one command asked buildkit for, made once where the command enters.

Each entry point (the ``buildkit`` command, ``buildkit.setup()``, a PEP 517 hook) makes
one :class:`Invocation` from what it was given (its arguments, the front end's config
settings) and passes it down.  Below the front ends nothing reads ``sys.argv`` or a
module-level stack: a question about the command is a question to its invocation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Invocation:
    """One command: what it is, its config settings, and what its front end decided it needs."""

    # The command's own words: setup.py's arguments, a PEP 517 hook's name, a `buildkit` subcommand.
    command: tuple[str, ...] = ()
    # The config settings meant for buildkit (``pip -C``, ``python -m build -C``): the top option layer.
    config_settings: Mapping[str, Any] = field(default_factory=dict)
    # Whether the command needs the compiled outputs (``--help``, ``egg_info``, ``sdist`` never do).
    builds: bool = False
    # A wheel build: CMake installs into a staging copy of the package tree under the build
    # folder and the wheel is packaged from there; otherwise the build is in place.
    staged: bool = False
    # An sdist: a release artifact, so no development label (+git<sha>) in its version.
    for_sdist: bool = False
    # An editable wheel (PEP 660, setuptools' ``editable_wheel``): built in place, and installed
    # by the front end into an environment the build may not run in (an isolated build's is
    # thrown away after it).
    editable_wheel: bool = False


# What a program that loads a project only to ask it questions (a tool, a test) stands for:
# no command line, no config settings, nothing built, and in place should it build.
DEFAULT_INVOCATION = Invocation()
