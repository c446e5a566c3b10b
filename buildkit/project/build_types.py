"""A ``build-type`` list's other build types, each built in a build folder of its own.

``build-type = ["Release", "Debug"]`` builds the first type in the build folder, as a single
type is built, then each other one in ``<build folder>/build-types/<type>`` (the
primary folder's claim, lock and ``clean`` cover it), each installed into the same prefix
after the one before.  Reconfiguring one Ninja folder back and forth between the types would
rebuild everything twice a run; a folder per type keeps each one's no-op a no-op.

What two types install at one path is the later type's.  Copies of one source are the same
file; an output each build makes itself (a library, a configured file) is not: such a path
is named, every run, with the type whose copy is kept.  A type that is no longer built (the
list changed, or ``CMAKE_BUILD_TYPE``/``DEBUG=1``/``-C build-type=`` asks for one type) has
the files its last install put into this prefix taken out, so that they cannot ship.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from buildkit._util import console
from buildkit.builder.build_state import build_type_dir, build_type_dirs
from buildkit.builder.install.step import PackageTreeInstall
from buildkit.config.options import BuildOptions

# What the options of a listed type's build say its build type came from.
LISTED = "[tool.buildkit] build-type list"
# How many overwritten files a warning names before it counts the rest.
SHOWN = 5


def build_type_folder(build_dir: Path, build_type: str) -> Path:
    return Path(build_type_dir(build_dir, build_type))


def options_for(options: BuildOptions, build_type: str) -> BuildOptions:
    """The options of the build of one of the list's other types: that type, and no list."""
    return replace(options, cmake_build_type=build_type, sources={**options.sources, "cmake_build_type": LISTED},
                   extra_build_types=(), dropped_build_types=())


def report_overwritten(installs: Sequence[PackageTreeInstall]) -> None:
    """Name each path that a later build type installed over an earlier type's own output."""
    for index, later in enumerate(installs[1:], start=1):
        written = later.manifest()
        for earlier in installs[:index]:
            replaced = earlier.replaced(sorted(earlier.manifest() & written))
            if not replaced:
                continue
            shown = ", ".join(replaced[:SHOWN]) + (f" and {len(replaced) - SHOWN} more" if len(replaced) > SHOWN
                                                   else "")
            console.warn(f"the {earlier.build_type} and {later.build_type} builds both install {shown}: the "
                         f"{later.build_type} build's copy is kept (the later type of [tool.buildkit] build-type), "
                         "and each build installs it again every run. Give each type's files a place or name of "
                         "their own ($<CONFIG> in the DESTINATION, or CMAKE_<CONFIG>_POSTFIX).")


def withdraw_unbuilt(build_dir: Path, install_prefix: Path, install_root: Path, built: Sequence[str],
                     keep: set[str]) -> None:
    """Take out of ``install_root`` what a build type not built installed there (into ``install_prefix``
    and the rest of that root), but ``keep``."""
    for folder in map(Path, build_type_dirs(build_dir)):
        if folder.name in built:
            continue
        # The withdrawal runs no CMake: the install's cmake is never started.
        removed = PackageTreeInstall(folder, install_prefix, Path("cmake"), folder.name,
                                     install_root=install_root).withdraw(keep)
        if removed:
            console.info(f"removed the {len(removed)} file(s) that the {folder.name} build installed into "
                         f"{install_root} ({removed[0]}...): this command does not build {folder.name}")
