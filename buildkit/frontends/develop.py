"""``buildkit develop`` / ``buildkit build``: the fast path of the edit-compile loop.

A no-op must cost little more than Python's start and a ninja no-op: the CMake
driver decides nothing needs configuring, ninja finds nothing to do, and the
develop state says the ``_C`` stub and the editable registration are current.
Only when something changed does the project's ``setup.py`` run, in-process and
handed the project this command already built: one build per command.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

from buildkit.config.invocation import Invocation
from buildkit.frontends import develop_state, handoff
from buildkit.frontends.setuptools.flow import setup
from buildkit.project import Project


def run_setup_command(root: Path, arguments: list[str]) -> None:
    """Run the project's setup.py in this process, as ``python setup.py <arguments>`` would."""
    setup_py = root / "setup.py"
    saved_argv, saved_cwd = sys.argv[:], os.getcwd()
    sys.argv = [str(setup_py), *arguments]
    os.chdir(root)
    try:
        if setup_py.is_file():
            runpy.run_path(str(setup_py), run_name="__main__")
        else:
            setup()
    finally:
        os.chdir(saved_cwd)
        sys.argv = saved_argv


def develop(root: Path, invocation: Invocation, *, register: bool = True) -> Project:
    """Build in place; with ``register``, also keep the editable install current."""
    project = Project.load(root, invocation=invocation)
    with project.locked():  # through setuptools' part too
        project.build()
        if project.stopped_after_configure:
            return project
        project.write_generated_files()
        if not develop_state.is_current(project, register):
            with handoff.calling_setup(handoff.Caller(invocation, project)):
                run_setup_command(project.root, ["develop"] if register else ["build_ext", "--inplace"])
            if not register:  # the develop command records its own state
                develop_state.record(project, register)
    return project
