"""``buildkit.setup()``: what a consuming project's ``setup.py`` calls.

It runs ten steps in a fixed order (see docs/flow.md):

1. settings and options, mode-conflict check   6. extension configuration
2. base requirements                            7. long description from the README
3. linker-script setup (inside the configure)   8. package_data
4. command-line parsing                         9. ``setuptools.setup``
5. build dependencies (CMake), once            10. what packaging left unmatched

Steps 1 to 5 import nothing of setuptools, so a no-op ``setup.py develop`` costs
no more than its build check; steps 6 to 10 are in :mod:`.packaging`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildkit._util import console
from buildkit.builder import build_output
from buildkit.config.invocation import Invocation
from buildkit.errors import reporting_errors
from buildkit.frontends import develop_state, handoff, noop_finish
from buildkit.project import Project

if TYPE_CHECKING:
    from setuptools.dist import Distribution

    from buildkit.builder.driver import DriverResult

    # What setup() returns: setuptools' distribution, the build's result for CMAKE_ONLY, None for a
    # develop with nothing to do.
    SetupResult = Distribution | DriverResult | None

# Commands whose work needs the CMake outputs; everything else (egg_info, sdist,
# clean, --help...) must answer without building.
BUILDING_COMMANDS = frozenset({
    "build", "build_ext", "build_clib", "develop", "install", "bdist_wheel", "bdist",
    "bdist_egg", "editable_wheel", "bdist_rpm", "bdist_dumb",
})
# Commands that make a wheel (or install one): they build into the staging tree and
# leave the source tree as it was; develop and editable builds install in place.
WHEEL_COMMANDS = frozenset({"bdist_wheel", "bdist", "bdist_egg", "bdist_rpm", "bdist_dumb", "build", "install"})
IN_PLACE_ARGUMENTS = frozenset({"develop", "editable_wheel", "--inplace", "-i"})
HELP_FLAGS = frozenset({"-h", "--help", "--help-commands", "--name", "--version", "--fullname",
                        "--author", "--url", "--license", "--description", "--long-description",
                        "--classifiers", "--keywords", "--requires", "--provides"})


def needs_build(argv: Sequence[str]) -> bool:
    """Step 4: whether the command line asks for compiled outputs (``--help`` never does)."""
    if any(arg in HELP_FLAGS for arg in argv):
        return False
    return any(arg in BUILDING_COMMANDS for arg in argv)


def builds_a_wheel(argv: Sequence[str]) -> bool:
    """Whether the command line packages a wheel rather than building in place."""
    return any(arg in WHEEL_COMMANDS for arg in argv) and not any(arg in IN_PLACE_ARGUMENTS for arg in argv)


def setup_py_invocation(arguments: Sequence[str], config_settings: Mapping[str, Any]) -> Invocation:
    """What a ``setup.py`` command line asks for, with the config settings of the front end
    that runs it (a PEP 517 hook's; none on a command line)."""
    command = tuple(arguments)
    builds = needs_build(command)
    return Invocation(command, config_settings, builds=builds, staged=builds_a_wheel(command),
                      for_sdist="sdist" in command and not builds, editable_wheel="editable_wheel" in command)


def _say_dropped_git_label(project: Project) -> None:
    resolved = project.resolved_version
    if resolved.git_sha and resolved.source == project.settings.version_file:
        console.info(f"sdist version {resolved.version}: without the +git{resolved.git_sha[:7]} label that "
                     "builds from this checkout carry (an sdist is a release artifact)")


def setup(**overrides: Any) -> SetupResult:
    """Run the ten-step flow; ``overrides`` go to ``setuptools.setup`` unchanged.

    The entry point of ``buildkit.setup()``: the one reader of ``sys.argv`` and of the front
    end that runs this ``setup.py`` in-process (:mod:`buildkit.frontends.handoff`)."""
    return reporting_errors(lambda: _enter(sys.argv, handoff.current_caller(), overrides))


def _package(project: Project, overrides: dict[str, Any]) -> Distribution:
    """Steps 6 to 10, in setuptools."""
    # setuptools costs ~130 ms to import: a no-op `setup.py develop` never gets here.
    from buildkit.frontends.setuptools.packaging import call_setuptools

    return call_setuptools(project, overrides)


def _enter(argv: Sequence[str], caller: handoff.Caller | None, overrides: dict[str, Any]) -> SetupResult:
    root = project_root(argv[0] if argv else "")
    if caller is not None and caller.project is not None and caller.project.root == root:
        # `buildkit develop` built it, and holds the folder's lock
        return _package(caller.project, overrides)
    config_settings = caller.invocation.config_settings if caller is not None else {}
    return _setup(root, setup_py_invocation(argv[1:], config_settings), overrides)


def _setup(root: Path, invocation: Invocation, overrides: dict[str, Any]) -> SetupResult:
    project = Project.load(root, invocation=invocation)  # 1
    if invocation.for_sdist:  # only then: resolving the version runs git, which no-op paths may not need
        _say_dropped_git_label(project)
    project.requirements()  # 2: a bad requirement stops here, before any build
    if not invocation.builds:  # 4 (3 happens inside the driver's configure inputs)
        return _package(project, overrides)
    # One command per build folder at a time, from the CMake build to the last file
    # setuptools writes (the stub, the wheel, the editable registration).  A develop's one
    # result line comes at its end, with setuptools' part, as `buildkit develop`'s does.
    develop = invocation.command == ("develop",)
    with project.locked(), build_output.one_result_line() if develop else nullcontext():
        result = project.build()  # 5
        if project.stopped_after_configure:
            return result
        project.write_generated_files()
        # Nothing for setuptools to do when the stub and the editable registration
        # are current: skip its machinery, as `buildkit develop` does.
        if develop and develop_state.is_current(project, register=True):
            noop_finish.record(project, register=True)
            return None
        with build_output.setup_py_phase("setuptools"):
            packaged = _package(project, overrides)
        if develop:
            noop_finish.record(project, register=True)  # setuptools returned: the develop is done
        return packaged


def project_root(script_name: str) -> Path:
    script = Path(script_name) if script_name else None
    if script and script.name == "setup.py" and script.exists():
        return script.resolve().parent
    return Path.cwd().resolve()
