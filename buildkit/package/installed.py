"""What becomes of each file CMake installed into the package tree.

The default is scikit-build-core's: what the install step put into the package tree
is what the project means to ship, so it ships whether or not a package-data rule
names it.  Only a setting keeps an installed file out, and each one says which:

* ``wheel-exclude`` in ``[tool.buildkit]``: globs on the file's path in the wheel;
* a package-data rule: its ``exclude``, a ``when`` that does not hold, or ``modes``
  that leave the file to the other wheel of a split build;
* an optional package that is switched off; a library-only wheel's rule that it
  holds no Python extension module.

A file installed into a folder at the wheel's root that is no package of the project
(``install(TARGETS prog)`` puts ``bin/prog`` there in wheel-root mode) ships in that
folder, as scikit-build-core ships it; the build names each such folder.  A file that
cannot ship where it was installed (directly at the wheel's root, e.g. a data file
installed with ``DESTINATION .``) is dropped: reported by name, with the setting
that keeps it out on purpose, and ``buildkit wheels`` fails on it (it reads the
report this module writes into the build folder).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from buildkit._util import console
from buildkit._util.fileutil import FolderResolver, read_json, relative_under, write_json
from buildkit.builder.build_state import LEFT_OUT_REPORT, state_path
from buildkit.config.conditions import BoolCache
from buildkit.config.globs import glob_match
from buildkit.config.modes import WheelMode
from buildkit.package.contents import is_extension_module, module_suffixes
from buildkit.package.layout import PackageDataRule, RuleVerdicts
from buildkit.package.links import LinkGuard

HINT = ("Install each where the wheel ships it (a package's folder), or list it in [tool.buildkit] "
        "wheel-exclude (globs on the path in the wheel, e.g. `pkg/tests/**`) to leave it out on purpose.")


@dataclass(frozen=True)
class LeftOut:
    path: str  # as it would be in the wheel
    reason: str


@dataclass(frozen=True)
class InstalledFiles:
    """Installed files to ship as package data (package -> paths relative to its folder),
    those kept out on purpose and those dropped, and the wheel-exclude patterns that
    matched no installed file."""

    package_data: dict[str, list[str]] = field(default_factory=dict)
    py_modules: tuple[str, ...] = ()  # top-level .py modules installed at the wheel's root
    # Folders at the wheel's root that are no package (bin/): their files ship as package data.
    root_folders: tuple[str, ...] = ()
    excluded: tuple[LeftOut, ...] = ()
    dropped: tuple[LeftOut, ...] = ()
    unmatched_excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PackageTree:
    """Where the built packages are: the folder of the top-level packages and modules,
    the main package (the one the package-data rules are relative to) and its folder,
    the packages and extension modules the wheel ships and the packages switched off."""

    root: Path
    package: str
    package_folder: Path
    packages: Sequence[str]
    extension_modules: Collection[str] = ()
    switched_off: Collection[str] = ()


def sort_installed(installed: Iterable[str | Path], tree: PackageTree, *, rules: Sequence[PackageDataRule],
                   mode: WheelMode, cache: BoolCache | None, wheel_exclude: Sequence[str],
                   links: LinkGuard) -> InstalledFiles:
    """Decide for each installed file whether it ships, is kept out on purpose, or is dropped.
    An installed link that would ship (its target's content) must pass ``links``."""
    main = _slashed(tree.package)
    modules = {f"{_slashed(name)}{suffix}" for name in tree.extension_modules for suffix in module_suffixes()}
    # Deepest package first: a file belongs to the innermost package folder holding it.
    owners = sorted(tree.packages, key=lambda p: p.count("."), reverse=True)
    package_data: dict[str, list[str]] = {}
    excluded, dropped, used, py_modules, root_folders = [], [], set(), [], set()
    resolver = FolderResolver()
    verdicts = RuleVerdicts(rules, mode, cache)
    seen: set[str] = set()
    for path in installed:
        located = _in_wheel(path, tree, main, resolver, links)
        if located is None:
            continue  # outside the package tree: the wheel's data/scripts folders, an absolute destination
        in_wheel, in_main = located
        if in_wheel in seen:
            continue  # named twice (a staged source CMake also installed), as two spellings of one path
        seen.add(in_wheel)
        pattern = next((p for p in wheel_exclude if glob_match(p, in_wheel)), None)
        if pattern is not None:
            used.add(pattern)
            excluded.append(LeftOut(in_wheel, f"wheel-exclude {pattern!r}"))
            continue
        if in_wheel in modules:
            continue  # shipped as an extension module
        reason = _kept_out(in_wheel, in_main, tree, mode, verdicts)
        if reason is not None:
            excluded.append(LeftOut(in_wheel, reason))
        elif in_main is not None:
            package_data.setdefault(tree.package, []).append(in_main)
        elif owner := next((p for p in owners if in_wheel.startswith(_slashed(p) + "/")), None):
            package_data.setdefault(owner, []).append(in_wheel[len(_slashed(owner)) + 1:])
        elif "/" not in in_wheel and in_wheel.endswith(".py") and in_wheel[:-3].isidentifier():
            py_modules.append(in_wheel[:-3])  # `install(FILES pmod.py DESTINATION .)`: a top-level module
        elif "/" in in_wheel and (folder := in_wheel.split("/", 1)[0]).isidentifier():
            # setuptools ships a folder listed as a package, __init__.py or not (a dotted name would not be one)
            root_folders.add(folder)
            package_data.setdefault(folder, []).append(in_wheel[len(folder) + 1:])
        else:
            shipped = ", ".join(sorted({p.split(".")[0] for p in tree.packages})) or "none"
            dropped.append(LeftOut(in_wheel, f"outside the packages the wheel ships: {shipped}"))
    return InstalledFiles({k: sorted(v) for k, v in package_data.items()}, tuple(sorted(py_modules)),
                          tuple(sorted(root_folders)), tuple(excluded), tuple(dropped),
                          tuple(p for p in wheel_exclude if p not in used))


def _slashed(dotted: str) -> str:
    return dotted.replace(".", "/")


def _in_wheel(path: str | Path, tree: PackageTree, main: str, resolver: FolderResolver,
              links: LinkGuard) -> tuple[str, str | None] | None:
    """The file's path in the wheel, and relative to the main package's folder (None when
    it is not under it); None when it is outside the package tree."""
    # Resolve the folder only: an installed symlink (libfoo.so -> libfoo.so.1) is a file of its own.
    resolved = resolver.file(path)
    try:
        mode = os.lstat(resolved).st_mode
    except OSError:
        return None  # gone since the install
    if stat.S_ISDIR(mode):
        return None
    in_main = relative_under(resolved, resolver.folder(tree.package_folder))
    in_wheel = f"{main}/{in_main}" if in_main is not None else relative_under(resolved, resolver.folder(tree.root))
    if in_wheel is None:
        return None
    if stat.S_ISLNK(mode):  # only links cost more than the lstat every installed file gets
        links.check_link(resolved)
        if os.path.isdir(resolved):
            return None
    return in_wheel, in_main


def _kept_out(in_wheel: str, in_main: str | None, tree: PackageTree, mode: WheelMode,
              verdicts: RuleVerdicts) -> str | None:
    """The setting that keeps an installed file out of this wheel, if any."""
    for package in tree.switched_off:
        if PurePosixPath(in_wheel).is_relative_to(_slashed(package)):
            return f"optional package {package} is switched off"
    if mode is WheelMode.LIBRARY_ONLY and is_extension_module(in_wheel):
        return "a library-only wheel holds no Python extension module"
    if in_main is None:
        return None
    return verdicts.withheld(in_main)


def describe_dropped(dropped: Sequence[LeftOut]) -> str:
    """One sentence naming every dropped file and why, then what to do."""
    listing = "; ".join(f"{item.path} ({item.reason})" for item in dropped)
    return f"{len(dropped)} file(s) CMake installed into the package tree are not in the wheel: {listing}. {HINT}"


def report(result: InstalledFiles) -> None:
    """Warn about each dropped file and each wheel-exclude pattern that matched nothing;
    name the folders that ship at the wheel's root without being packages, and, in the
    detailed output, the files kept out on purpose."""
    for folder in result.root_folders:
        console.info(f"{folder}/ ships at the wheel's root (site-packages/{folder}/), where CMake installed "
                     f"{len(result.package_data[folder])} file(s): it is no package of the project")
    if result.dropped:
        console.warn(describe_dropped(result.dropped))
    if result.unmatched_excludes:
        console.warn(f"[tool.buildkit] wheel-exclude pattern(s) matched no installed file: "
                     f"{', '.join(result.unmatched_excludes)}. Remove them, or fix them to match paths in the "
                     f"wheel (`<package>/...`).")
    for item in result.excluded:
        console.detail(f"left out of the wheel: {item.path} ({item.reason})")


def report_path(build_dir: Path) -> Path:
    return Path(state_path(build_dir, LEFT_OUT_REPORT))


def write_report(build_dir: Path, result: InstalledFiles) -> None:
    """The dropped files, for `buildkit wheels` to fail on after the build."""
    write_json(report_path(build_dir), {"dropped": [{"path": i.path, "reason": i.reason} for i in result.dropped]})


def read_dropped(build_dir: Path) -> list[LeftOut]:
    """The dropped files the last wheel build from this build folder reported; none when it wrote no report."""
    data = read_json(report_path(build_dir))
    try:
        return [LeftOut(str(item["path"]), str(item["reason"])) for item in data["dropped"]]
    except (KeyError, TypeError):  # none, or not what write_report writes: as if none
        return []
