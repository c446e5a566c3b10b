"""Rebuild on import: what an editable install's hook runs at the first import of its project.

With ``editable-rebuild = true``, an editable install (``pip install -e .``, ``buildkit
develop``) carries a small hook in site-packages (``templates/editable_rebuild.py.in``, started
by a ``.pth`` file).  At the first import of one of the project's top-level names in a
process, it calls :func:`rebuild` before the import goes on, which asks the no-op develop's
first stage (:mod:`buildkit.frontends.noop_develop`: its record, a ninja no-op, the install
step's summary) in this process.  Nothing to build or install: that is all, and nothing is
printed.  Anything else (work for ninja, a changed input, no record yet) is left to a process
of its own, ``python -P -m buildkit.frontends.cli.import_rebuild``: ``buildkit build`` for the
project, the no-op first and the whole command when more than sources changed, under the
build folder's lock.  It prints its progress when it builds, and a failure's first error
comes back on a pipe and stops the import (:class:`RebuildOnImportError`).

A build runs in a process of its own: it needs the project's options, setuptools for a ``_C``
stub and the console's display, none of which belongs in the importing program; and the
record it leaves names the import path of a command, the same for every program that imports
the project (pytest puts more on its own), which the first stage here compares.  ``-P``
keeps the importing program's working folder off that process's ``sys.path``.

Lean: every program that imports the project imports this module.  Besides ``os`` and
``sys`` it imports ``_util/switches.py``, and the first stage's modules once the switch
says to rebuild; the strict parser only for a word the switches' lists lack.
"""

from __future__ import annotations

import os
import sys

from buildkit._util.switches import (
    EDITABLE_REBUILD_VARIABLE,
    EDITABLE_VERBOSE_VARIABLE,
    REBUILDING_FOR_IMPORT,
    switch_or,
)

# The child's module, and the descriptor its end of the report pipe gets there.
CHILD = "buildkit.frontends.cli.import_rebuild"
REPORT_FD = 3
# A build in this process holds its folder's lock through this module: looked up, not
# imported (with the build folder's names and shutil, ~3 ms of every import's rebuild check).
BUILD_LOCK = "buildkit.builder.build_lock"


class RebuildOnImportError(ImportError):
    """The rebuild before an import failed; the message holds the first error."""


def rebuild(root: str, build_dir: str, name: str, verbose: bool) -> None:
    """Bring the in-place build of the project at ``root`` (distribution ``name``, build folder
    ``build_dir``) up to date before one of its modules is imported.  ``verbose``: the
    install's ``editable-verbose``; the environment's variables win over it and over the hook
    itself, as at any command."""
    if not _switch(EDITABLE_REBUILD_VARIABLE, default=True, name=name):
        return
    if root in os.environ.get(REBUILDING_FOR_IMPORT, "").split(os.pathsep) or _building_here(build_dir):
        return  # imported by its own build (a CMake step, setup.py): that build is not done yet
    if not os.path.isdir(root):
        raise RebuildOnImportError(
            f"{name} is an editable install of {root}, which is gone, so it cannot be rebuilt before its import "
            f"(editable-rebuild). Install it again from where the project is now, or uninstall it "
            f"(`pip uninstall {name}`).", name=name)
    shown = _switch(EDITABLE_VERBOSE_VARIABLE, default=verbose, name=name)
    # Start-up cost: the no-op's first stage (~5 ms of imports) only where the hook is switched on.
    from buildkit.frontends import noop_develop

    if noop_develop.run_if_current(root, register=False, build_dir=build_dir, for_import=True):
        return  # nothing to build or install: no process of its own needed
    code, report = _run_child(root, build_dir, name, shown)
    if code == 0:
        return
    if not report:
        where = "above" if shown else f"hidden by {EDITABLE_VERBOSE_VARIABLE}=0 (`buildkit build {root}` shows it)"
        report = f"the build stopped with exit status {code} and no report; its output is {where}."
    raise RebuildOnImportError(
        f"{name} could not be rebuilt before its import (editable-rebuild): {report}\n"
        f"Fix it and import again; {EDITABLE_REBUILD_VARIABLE}=0 imports the last build as it is.", name=name)


def _building_here(build_dir: str) -> bool:
    """Whether a buildkit command of this process builds in ``build_dir`` (``buildkit develop``
    runs the project's setup.py in-process, which may import the project)."""
    lock = sys.modules.get(BUILD_LOCK)
    return lock is not None and bool(lock.held_here(build_dir))


def _switch(variable: str, *, default: bool, name: str) -> bool:
    """``variable`` as the options read it, ``default`` when it is unset; a word the strict
    parser refuses stops the import with its message."""
    verdict = switch_or(variable, default)
    if verdict is not None:
        return verdict
    # Start-up cost: the strict parser and the error types load only for a word the lists lack.
    from buildkit.config.parsing import parse_bool
    from buildkit.errors import ConfigError

    try:
        parse_bool(os.environ[variable], variable)
    except ConfigError as refused:
        raise RebuildOnImportError(f"{name} was not rebuilt before its import: {refused}", name=name) from None
    raise AssertionError("parse_bool refuses what switch_word does not know")


def _run_child(root: str, build_dir: str, name: str, shown: bool) -> tuple[int, str]:
    """Run the rebuild; its exit status and what it reported (a failure's first error)."""
    if not sys.executable:
        raise RebuildOnImportError(f"{name} cannot be rebuilt before its import (editable-rebuild): this "
                                   "Python does not know its own executable (sys.executable is empty).", name=name)
    read_end, write_end = os.pipe()  # both close on exec; the child's REPORT_FD is a copy, which stays open
    # The build's output goes to stderr: the importing program's stdout may be its data.
    output = [(os.POSIX_SPAWN_DUP2, 2, 1)] if shown else [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0)
                                                          for fd in (1, 2)]
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, write_end, REPORT_FD),
               *output]
    marks = [mark for mark in os.environ.get(REBUILDING_FOR_IMPORT, "").split(os.pathsep) if mark]
    env = {**os.environ, REBUILDING_FOR_IMPORT: os.pathsep.join([*marks, root])}
    command = [sys.executable, "-P", "-m", CHILD, root, build_dir, name, str(REPORT_FD)]
    try:
        pid = os.posix_spawn(sys.executable, command, env, file_actions=actions)
    except BaseException as error:
        os.close(read_end)
        if isinstance(error, OSError):
            raise RebuildOnImportError(f"{name} cannot be rebuilt before its import (editable-rebuild): "
                                       f"{sys.executable} did not start ({error}).", name=name) from None
        raise
    finally:
        os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            report = pipe.read()  # until the child exits: only it holds the write end now
        status = os.waitpid(pid, 0)[1]
    except KeyboardInterrupt:
        os.waitpid(pid, 0)  # the child had the same Ctrl-C: it stops its build first
        raise
    return os.waitstatus_to_exitcode(status), report.decode("utf-8", errors="replace").strip()
