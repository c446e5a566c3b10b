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
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildkit._util import console
from buildkit.config.options import current_config_settings
from buildkit.errors import reporting_errors
from buildkit.frontends import develop_state, noop_finish
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


def _say_dropped_git_label(project: Project) -> None:
    resolved = project.resolved_version
    if resolved.git_sha and resolved.source == project.settings.version_file:
        console.info(f"sdist version {resolved.version}: without the +git{resolved.git_sha[:7]} label that "
                     "builds from this checkout carry (an sdist is a release artifact)")


def setup(**overrides: Any) -> SetupResult:
    """Run the ten-step flow; ``overrides`` go to ``setuptools.setup`` unchanged."""
    return reporting_errors(lambda: _setup(overrides))


def _package(project: Project, overrides: dict[str, Any]) -> Distribution:
    """Steps 6 to 10, in setuptools."""
    # setuptools costs ~130 ms to import: a no-op `setup.py develop` never gets here.
    from buildkit.frontends.setuptools.packaging import call_setuptools

    return call_setuptools(project, overrides)


def _setup(overrides: dict[str, Any]) -> SetupResult:
    root = _project_root()
    handed = develop_state.handed_over(root)
    if handed is not None:  # `buildkit develop` built it, and holds the folder's lock
        return _package(handed, overrides)
    project = Project.load(root, config_settings=current_config_settings())  # 1
    project.staged = builds_a_wheel(sys.argv[1:])
    project.for_sdist = "sdist" in sys.argv[1:] and not needs_build(sys.argv[1:])
    if project.for_sdist:  # only then: resolving the version runs git, which no-op paths may not need
        _say_dropped_git_label(project)
    project.requirements()  # 2: a bad requirement stops here, before any build
    if not needs_build(sys.argv[1:]):  # 4 (3 happens inside the driver's configure inputs)
        return _package(project, overrides)
    # One command per build folder at a time, from the CMake build to the last file
    # setuptools writes (the stub, the wheel, the editable registration).
    with project.locked():
        result = project.build()  # 5
        if project.options.cmake_only:
            return result
        project.write_generated_files()
        # Nothing for setuptools to do when the stub and the editable registration
        # are current: skip its machinery, as `buildkit develop` does.
        if sys.argv[1:] == ["develop"] and develop_state.is_current(project, register=True):
            noop_finish.record(project, register=True)
            return None
        packaged = _package(project, overrides)
        if sys.argv[1:] == ["develop"]:
            noop_finish.record(project, register=True)  # setuptools returned: the develop is done
        return packaged


def _project_root() -> Path:
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script and script.name == "setup.py" and script.exists():
        return script.resolve().parent
    return Path.cwd().resolve()
