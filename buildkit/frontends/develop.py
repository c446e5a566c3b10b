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

from buildkit._util import console
from buildkit._util.interpreter import default_build_dir
from buildkit.builder import build_output
from buildkit.config.drop_in import uses_drop_in
from buildkit.config.invocation import Invocation
from buildkit.errors import BuildkitError
from buildkit.frontends import develop_state, editable, handoff, noop_record
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
    if uses_drop_in(root):
        return develop_setup_py(root, invocation, register=register)
    project = Project.load(root, invocation=invocation)
    with project.locked():  # through setuptools' part too
        project.build()
        if project.stopped_after_configure:
            return project
        project.write_generated_files()
        if not develop_state.is_current(project, register):
            with handoff.calling_setup(handoff.Caller(invocation, project)), build_output.setup_py_phase():
                run_setup_command(project.root, ["develop"] if register else ["build_ext", "--inplace"])
            if not register:  # the develop command records its own state
                develop_state.record(project, register)
    return project


def develop_setup_py(root: Path, invocation: Invocation, *, register: bool) -> Project:
    """A buildkit.torch project: its setup.py is its configuration, so it runs (``build_ext
    --inplace``), and its BuildExtension builds; then the editable install is kept current.
    The next develop with nothing changed answers from the no-op record without running it."""
    changed = noop_record.changed_inputs(str(root), register, default_build_dir(str(root)))
    if changed:  # setup.py imports torch (seconds): say what made this develop more than a no-op
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        console.info(f"running setup.py: {', '.join(changed[:3])}{more} changed since the last develop")
    built = handoff.TorchBuild()
    with handoff.calling_setup(handoff.Caller(invocation, torch_build=built)), build_output.setup_py_phase():
        run_setup_command(root, ["build_ext", "--inplace"])
    project = built.project
    if project is None:
        raise BuildkitError(f"{root / 'setup.py'} ran, but built nothing with buildkit.torch's BuildExtension.",
                            "Pass it to setup() as cmdclass={\"build_ext\": BuildExtension}, with the extensions "
                            "made by buildkit.torch's CppExtension or CUDAExtension in ext_modules.")
    if register and project.options.editable_rebuild:
        console.warn("editable-rebuild: a buildkit.torch project's editable install gets no rebuild-on-import hook "
                     "(its setup.py is its configuration); run `buildkit develop` after an edit")
    if not project.options.cmake_only and not develop_state.is_current(project, register):
        if register:
            editable.register(editable.spec_from_distribution(built.distribution, project.root))
        develop_state.record(project, register)
    return project
