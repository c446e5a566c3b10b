"""The one channel into the ``buildkit.setup()`` that a project's ``setup.py`` calls.

A PEP 517 hook (through setuptools' backend) and ``buildkit develop`` (through runpy) run
the project's ``setup.py`` in their own process.  That file is the user's code and calls
``buildkit.setup()`` without arguments, so what the outer front end was asked for cannot
travel as an argument: it is parked here for the length of the call, and read once, by
``buildkit.setup()``'s entry (:func:`buildkit.frontends.setuptools.flow.setup`), which
makes its own invocation from it, or by buildkit.torch's ``BuildExtension``, which
leaves what it built in the caller's :class:`TorchBuild`.  Nothing else reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from buildkit.config.invocation import Invocation
from buildkit.project import Project


@dataclass
class TorchBuild:
    """What the ``BuildExtension`` of a buildkit.torch ``setup.py`` built, for the front end that
    ran it (``buildkit develop``): such a project is known only once its setup.py has run."""

    project: Project | None = None
    distribution: Any = None  # setuptools' Distribution (this module imports no setuptools)


@dataclass(frozen=True)
class Caller:
    """The outer front end of a ``setup.py`` run in-process."""

    invocation: Invocation
    # Built by `buildkit develop`, which holds its folder's lock: setup() for the same root
    # packages this one instead of loading and building a second.
    project: Project | None = None
    # Where a buildkit.torch setup.py's BuildExtension leaves what it built.
    torch_build: TorchBuild | None = None


_callers: list[Caller] = []


@contextmanager
def calling_setup(caller: Caller) -> Iterator[None]:
    """While inside, ``buildkit.setup()`` runs for ``caller``."""
    _callers.append(caller)
    try:
        yield
    finally:
        _callers.pop()


def current_caller() -> Caller | None:
    """The innermost front end that runs a ``setup.py`` in this process, if any."""
    return _callers[-1] if _callers else None
