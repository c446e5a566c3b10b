"""The build folder's files, named once: buildkit's own state under ``<build>/.buildkit``
and the files of CMake's and Ninja's that buildkit reads.

Every module that keeps a file in the build folder takes its name from here, so one
place knows what the folder should hold.  :func:`clear_obstacles` runs when a command
claims the folder (``build_folder.claim_build_folder``): whatever stands where one of
these files belongs but is no file (a folder, a link, a pipe) is removed and named,
because every writer replaces its file with a rename, which a folder in the way turns
into a traceback on every run.  Damaged *content* is each reader's business: buildkit's
state files read as missing when they are unreadable, cut short or of the wrong type,
and CMake's own files make the driver configure again (``driver.configure_decision``).

Lean like ``build_lock``: the no-op develop's first stage imports it (``os`` only).
"""

from __future__ import annotations

import os
import shutil
import stat

STATE_FOLDER = ".buildkit"

# buildkit's state, under <build>/.buildkit.
MARKER = "build-folder"  # build_folder: this folder is buildkit's
LOCK = "lock"  # build_lock
LOGS = "logs"  # build_output: a folder
CONFIGURE_RECORD = "configure.json"  # driver: the inputs of the last finished configure
TOOLCHAIN_RECORD = "toolchain.json"  # toolchain: the tools of that configure
TOOL_PROBES = "toolchain-cache.json"  # toolchain: versions probed, by file stamp
BUILD_ENV_RECORD = "build-env.json"  # build_env: the build environment's CMake packages
COMPILE_COMMANDS_STAMP = "compile_commands.stamp"  # driver: when the root's copy last matched
DEVELOP_RECORD = "develop.json"  # develop_state: the last develop's inputs
NOOP_RECORD = "noop-develop.marshal"  # noop_record: what the no-op develop checks
PACKAGE_DATA_RECORD = "package-data.json"  # build_py: the package-data listings
LEFT_OUT_REPORT = "left-out-installed-files.json"  # package.installed: what a wheel leaves out
DEPENDENCIES_RECORD = "library-dependencies.json"  # package.dependencies: other wheels' libraries
BUILD_TRACE = "build-trace.json"  # cli.report: the default trace file
DIST_RECORD = "distributed.json"  # dist_session: the cluster found, the last build's counts and failure
DIST_SERVER_LOG = "sccache-server.log"  # dist_session: the warnings of the build's own sccache server
DIST_PROBE = "dist-probe"  # dist_session: a folder, the test compile that checks the cluster takes work
FIXED_STATE_FILES = (MARKER, LOCK, CONFIGURE_RECORD, TOOLCHAIN_RECORD, TOOL_PROBES, BUILD_ENV_RECORD,
                     COMPILE_COMMANDS_STAMP, DEVELOP_RECORD, NOOP_RECORD, PACKAGE_DATA_RECORD, LEFT_OUT_REPORT,
                     DEPENDENCIES_RECORD, BUILD_TRACE, DIST_RECORD, DIST_SERVER_LOG)
# install_step and install_manifest: one set per install prefix (prefix_key), as
# <name>-<key><suffix>.
INSTALL_STATE = {"record": ("install-", ".record"), "script": ("install-", ".cmake"),
                 "summary": ("install-", ".summary"), "output": ("install-", ".out"),
                 "pending": ("install-pending-", ""), "manifest": ("manifest-", ".txt")}

# CMake's and Ninja's files in <build> that buildkit reads or relies on.
CMAKE_CACHE = "CMakeCache.txt"
BUILD_NINJA = "build.ninja"
INSTALL_SCRIPT = "cmake_install.cmake"
INSTALL_MANIFEST = "install_manifest.txt"
COMPILE_COMMANDS = "compile_commands.json"
NINJA_LOG = ".ninja_log"
CMAKE_FILES_FOLDER = "CMakeFiles"
RULES_NINJA = os.path.join(CMAKE_FILES_FOLDER, "rules.ninja")
# buildkit's query to CMake's File API (file_api), in CMake's folder for it.
FILE_API = os.path.join(".cmake", "api", "v1")
FILE_API_CLIENT = "client-buildkit"
FILE_API_QUERY = os.path.join(FILE_API, "query", FILE_API_CLIENT, "query.json")
CMAKE_FILES = (CMAKE_CACHE, BUILD_NINJA, INSTALL_SCRIPT, INSTALL_MANIFEST, COMPILE_COMMANDS, NINJA_LOG,
               ".ninja_deps", RULES_NINJA, FILE_API_QUERY)


# The first line CMake writes into each generated file buildkit relies on: one that does
# not start so was cut short or overwritten (driver.configure_decision configures again).
_GENERATED_HEADERS = {INSTALL_SCRIPT: b"# Install script for directory: ",
                      BUILD_NINJA: b"# CMAKE generated file: DO NOT EDIT!",
                      "rules.ninja": b"# CMAKE generated file: DO NOT EDIT!"}


def starts_as_generated(path: str | os.PathLike[str]) -> bool:
    """Whether one of CMake's generated files (by its name) starts as CMake writes it."""
    header = _GENERATED_HEADERS[os.path.basename(path)]
    try:
        with open(path, "rb") as handle:
            return handle.read(len(header)) == header
    except OSError:
        return False


# The folders and files buildkit itself makes beside CMake's in <build>.
EGG_INFO = "egg-info"  # setuptools' egg_info (commands/egg_info.py)
BUILD_ENV_MIRROR = "build-env"  # build_env: the build environment's CMake packages
WHEEL_DIRS = "wheel-dirs"  # package.wheel_root: scikit-build-core's SKBUILD_*_DIR folders
WHEEL_STAGING = "wheel-staging"  # package.staging: the tree a wheel build packages
LINKER_SCRIPT = "linker_script.ld"  # project: the prioritized-text linker script
TORCH_PROJECT = "torch-project"  # torch_project: the CMake project of a buildkit.torch setup.py
# project: a build folder of its own for each build type after the first of a build-type list,
# <build>/build-types/<type>, inside the primary one (its lock, its claim, its `clean`).
BUILD_TYPES_FOLDER = "build-types"
BUILDKIT_ENTRIES = frozenset({STATE_FOLDER, EGG_INFO, BUILD_ENV_MIRROR, WHEEL_DIRS, WHEEL_STAGING, LINKER_SCRIPT,
                              TORCH_PROJECT, BUILD_TYPES_FOLDER})


def build_type_dir(build_dir: str | os.PathLike[str], build_type: str) -> str:
    """The build folder of ``build_type``, one of a build-type list's after the first."""
    return os.path.join(os.fspath(build_dir), BUILD_TYPES_FOLDER, build_type)


def build_type_dirs(build_dir: str | os.PathLike[str]) -> list[str]:
    """The build folders of other build types that a build-type list made in ``build_dir``."""
    folder = os.path.join(os.fspath(build_dir), BUILD_TYPES_FOLDER)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, name) for name in names if os.path.isdir(os.path.join(folder, name, STATE_FOLDER))]


def state_path(build_dir: str | os.PathLike[str], name: str) -> str:
    """``<build>/.buildkit/<name>``."""
    return os.path.join(os.fspath(build_dir), STATE_FOLDER, name)


def install_state_name(kind: str, key: str) -> str:
    """The name of one of an install prefix's state files (``INSTALL_STATE``)."""
    before, after = INSTALL_STATE[kind]
    return f"{before}{key}{after}"


def _expected_files(build_dir: str) -> list[str]:
    """Every path where a file of this module's names belongs, that exists now."""
    state = os.path.join(build_dir, STATE_FOLDER)
    paths = [os.path.join(state, name) for name in FIXED_STATE_FILES]
    try:
        names = os.listdir(state)
    except OSError:
        names = []
    prefixes = tuple(before for before, _ in INSTALL_STATE.values())
    paths += [os.path.join(state, name) for name in names if name.startswith(prefixes)]
    paths += [os.path.join(build_dir, name) for name in CMAKE_FILES]
    return paths


def clear_obstacles(build_dir: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """Remove whatever stands where one of the build folder's files belongs but is no
    regular file; (path, what it was) for each, for the caller to name.  A removed CMake
    file makes the next configure decision configure again (its file is missing)."""
    removed = []
    for path in _expected_files(os.fspath(build_dir)):
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            continue
        if stat.S_ISDIR(mode):
            shutil.rmtree(path)
            removed.append((path, "a folder"))
        else:
            os.unlink(path)  # a link (even to a file: buildkit replaces, never writes through), a pipe...
            removed.append((path, "a link" if stat.S_ISLNK(mode) else "no regular file"))
    return removed
