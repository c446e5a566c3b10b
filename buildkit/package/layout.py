"""Which built files go into the wheel, declared as rules instead of hand-built lists.

After CMake installs into the package directory (``lib/``, ``include/``,
``share/cmake/``, ``bin/``), the wheel's ``package_data`` is the set of files that
the active :class:`PackageDataRule` s match.  A rule is active for a wheel mode and,
optionally, only when a CMake cache condition holds (``when = "USE_KINETO"``).

Nothing here reads the environment: the wheel mode and the CMake cache are passed in.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import TypeVar

from buildkit._util import console
from buildkit._util.fileutil import write_text_if_changed
from buildkit.config.conditions import BoolCache, evaluate_condition, parse_condition
from buildkit.config.globs import check_glob, glob_match_any, glob_matcher
from buildkit.config.modes import WheelMode
from buildkit.config.settings import PackageDataEntry
from buildkit.errors import BuildkitError, ConfigError
from buildkit.package.links import LinkGuard

T = TypeVar("T")

# --- glob patterns (their syntax: buildkit.config.globs) ---------------------------

def _matches(patterns: Iterable[str], path: str) -> bool:
    return glob_match_any(patterns, path)


# --- rules -------------------------------------------------------------------------

@dataclass(frozen=True)
class PackageDataRule:
    """Files (globs relative to the package directory) shipped in some wheel modes.

    A rule with no ``include`` only excludes: its ``exclude`` patterns remove files
    that other rules added (e.g. ``**/__pycache__/**``).
    """

    include: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    modes: frozenset[WheelMode] | None = None
    when: str | None = None

    def __post_init__(self) -> None:
        for name in ("include", "exclude"):  # accept a lone string or a list, store a tuple
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        for pattern in self.include + self.exclude:
            check_glob(pattern)  # fail on a bad pattern when the rule is declared
        if not self.include and not self.exclude:
            raise ConfigError("A package-data rule has neither include nor exclude patterns.",
                              "Give it at least one glob, e.g. include = ['lib/*.so*'].")
        if self.modes is not None:
            object.__setattr__(self, "modes", frozenset(WheelMode(m) for m in self.modes))
        if self.when is not None:
            parse_condition(self.when)

    def active(self, mode: WheelMode, cache: BoolCache | None) -> bool:
        if self.modes is not None and mode not in self.modes:
            return False
        return self.when is None or evaluate_condition(self.when, cache)

    def describe(self) -> str:
        text = f"include {list(self.include)}"
        if self.modes is not None:
            text += f" (modes: {', '.join(sorted(m.value for m in self.modes))})"
        return text + (f" (when: {self.when})" if self.when else "")


def rules_from_config(entries: Sequence[PackageDataEntry]) -> tuple[PackageDataRule, ...]:
    """Rules from the ``[[tool.buildkit.package-data]]`` entries, which the settings
    reader has already checked (patterns, modes, conditions)."""
    return tuple(PackageDataRule(e.include, e.exclude, e.modes, e.when) for e in entries)


# Data, not code: what a PyTorch-style package installs and which wheels carry it.
_NOT_LIBRARY_ONLY = frozenset({WheelMode.FULL, WheelMode.PYTHON_ONLY})
_NOT_PYTHON_ONLY = frozenset({WheelMode.FULL, WheelMode.LIBRARY_ONLY})
ALWAYS_GLOBS = ("include/**/*.h", "include/**/*.hpp", "include/**/*.cuh", "**/*.pyi",
                "share/cmake/**/*.cmake", "bin/*")
NATIVE_LIBRARY_GLOBS = ("lib/*.so*", "lib/*.dylib*", "lib/*.dll", "lib/*.lib")
NEVER_GLOBS = ("**/__pycache__/**", "**/*.pyc")


def default_rules(python_ext_globs: Sequence[str] = ("lib/*_python*",), codegen_package: str | None = None,
                  package: str | None = None) -> tuple[PackageDataRule, ...]:
    """The rules a PyTorch-style project starts from.

    ``python_ext_globs`` name the library that binds C++ to Python: it belongs to the
    Python wheel, so the native-library rule excludes it.  ``codegen_package`` is a
    subpackage, dotted (``pkg._codegen``, with ``package="pkg"``, or ``_codegen``) or
    as a path relative to the package directory.
    """
    python_globs = tuple(python_ext_globs)
    rules = [PackageDataRule(ALWAYS_GLOBS),
             PackageDataRule(NATIVE_LIBRARY_GLOBS, exclude=python_globs, modes=_NOT_PYTHON_ONLY),
             PackageDataRule((), exclude=NEVER_GLOBS)]
    if python_globs:
        rules.append(PackageDataRule(python_globs, modes=_NOT_LIBRARY_ONLY))
    if codegen_package:
        if package and codegen_package.startswith(package + "."):
            codegen_package = codegen_package[len(package) + 1:]
        rules.append(PackageDataRule((codegen_package.replace(".", "/").strip("/") + "/**",),
                                     modes=_NOT_LIBRARY_ONLY))
    return tuple(rules)


# --- collection --------------------------------------------------------------------

@dataclass(frozen=True)
class PackageDataResult:
    package_dir: Path
    files: list[str]
    unmatched: tuple[PackageDataRule, ...]


def collect_package_data(package_dir: Path, rules: Iterable[PackageDataRule], mode: WheelMode,
                         cache: BoolCache | None, *, links: LinkGuard) -> PackageDataResult:
    """Files under ``package_dir`` that the rules active for ``mode`` select; each link
    among them must pass ``links`` (a link's content ships)."""
    package_dir = Path(package_dir)
    if not package_dir.is_dir():
        raise ConfigError(f"Package directory {package_dir} does not exist.",
                          "Run the CMake build and install step before collecting package data.")
    tree = files_below(str(package_dir), links=links)
    rules = list(rules)
    active = [r for r in rules if r.active(mode, cache)]
    global_excludes = [p for r in active if not r.include for p in r.exclude]
    # A component switched off in the cache withholds its files even where a broader
    # rule (include/**/*.h) would match them: `when` gates, it doesn't only add.
    global_excludes += [p for r in rules if r.when and not evaluate_condition(r.when, cache) for p in r.include]
    chosen: set[str] = set()
    unmatched = []
    for rule in (r for r in active if r.include):
        hits = [f for f in tree if _matches(rule.include, f)]
        if not hits:
            unmatched.append(rule)
        chosen.update(f for f in hits if not _matches(rule.exclude, f))
    files = sorted(f for f in chosen if not _matches(global_excludes, f))
    return PackageDataResult(package_dir, files, tuple(unmatched))


def files_below(top: str, *, links: LinkGuard, skipped_folders: Collection[str] = ()) -> list[str]:
    """The files below ``top`` as posix paths relative to it, without the folders named
    in ``skipped_folders``.  Symlinked files count (lib/libfoo.so -> libfoo.so.1);
    symlinked folders are not entered; every link, to a file or a folder, must pass
    ``links`` (inside the project, not dangling).  The folder listing says which entries
    are files and links, so only links cost a ``stat``: a package tree holds thousands
    of installed headers."""
    found: list[str] = []
    pending = [("", top)]
    while pending:
        prefix, folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as error:  # os.walk would skip it, and the wheel would lack its files
            raise BuildkitError(f"Could not list {folder} to collect the package's files: "
                                f"{error.strerror or error}.",
                                "Make the folder readable (or remove it from the package tree) and build "
                                "again.") from None
        for entry in entries:
            if entry.is_symlink():
                links.check_link(entry.path)
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in skipped_folders:
                    pending.append((f"{prefix}{entry.name}/", entry.path))
            elif entry.is_file():
                found.append(prefix + entry.name)
    return found


class RuleVerdicts:
    """Why the rules keep out a file, for many files: each rule's patterns, and whether it
    is active and its ``when`` holds, worked out once (a wheel asks for 8,000 files)."""

    def __init__(self, rules: Iterable[PackageDataRule], mode: WheelMode, cache: BoolCache | None) -> None:
        self.mode = mode
        self.rules = [(rule, glob_matcher(rule.include), glob_matcher(rule.exclude), rule.active(mode, cache),
                       not rule.when or evaluate_condition(rule.when, cache)) for rule in rules]
        # The order of collect_package_data: global excludes, then `when`, then selection.
        self.global_excludes = [(rule, excluded) for rule, _, excluded, active, _ in self.rules
                                if not rule.include and active]

    def withheld(self, path: str) -> str | None:
        """Why the rules keep out ``path`` (relative to the package directory): an exclude
        pattern, a ``when`` that does not hold, or ``modes`` that leave it to another
        wheel.  None when they select it or no rule speaks of it."""
        for rule, excluded in self.global_excludes:
            if excluded(path):
                return f"package-data exclude {list(rule.exclude)}"
        naming = [entry for entry in self.rules if entry[0].include and entry[1](path)]
        for rule, *_, holds in naming:
            if not holds:
                return f"package-data rule {rule.describe()}: `{rule.when}` does not hold"
        if any(active and not excluded(path) for _, _, excluded, active, _ in naming):
            return None
        for rule, *_ in naming:  # a rule for the other wheels says most: where the file belongs
            if rule.modes is not None and self.mode not in rule.modes:
                return f"package-data rule {rule.describe()}: not for {self.mode.value} wheels"
        for rule, _, excluded, *_ in naming:
            if excluded(path):
                return f"package-data rule {rule.describe()} excludes it"
        return None


def report_unmatched(result: PackageDataResult) -> bool:
    """Warn about every active rule that matched nothing; True when there were any."""
    if not result.unmatched:
        return False
    listing = "; ".join(rule.describe() for rule in result.unmatched)
    console.warn(f"{len(result.unmatched)} package-data rule(s) matched no files under "
                 f"{result.package_dir}: {listing}. Check that the CMake install step puts those "
                 f"files there, or limit the rule with 'modes' or 'when' so it only applies to "
                 f"builds that produce them.")
    return True


# --- wheel modes -------------------------------------------------------------------

def mode_packages(packages: Sequence[str], python_package: str, mode: WheelMode) -> list[str]:
    """A library-only wheel drops ``python_package`` and its subpackages; add the data
    package from :func:`library_only_layout` in their place."""
    if mode is not WheelMode.LIBRARY_ONLY:
        return list(packages)
    return [p for p in packages if p != python_package and not p.startswith(python_package + ".")]


def mode_ext_modules(ext_modules: Sequence[T], mode: WheelMode) -> list[T]:
    return [] if mode is WheelMode.LIBRARY_ONLY else list(ext_modules)


@dataclass(frozen=True)
class WheelLayout:  # keyword arguments for setuptools.setup
    packages: list[str]
    package_dir: dict[str, str]
    package_data: dict[str, list[str]]


def library_only_layout(files: Sequence[str], source_dir: Path, staging_dir: Path,
                        data_package: str) -> WheelLayout:
    """Stage the library files as their own top-level package (e.g. ``libfoo``).

    A library-only wheel and the python-only wheel that depends on it must not both
    own files under the Python package's directory, or uninstalling one would break
    the other; so the libraries move to a directory that belongs to this wheel alone.
    Staging also keeps the Python sources next to them out of the wheel.
    """
    if not data_package.isidentifier():
        raise ConfigError(f"Library data package name {data_package!r} is not a valid package name.",
                          "Use a Python identifier such as 'libfoo'.")
    target = Path(staging_dir) / data_package
    # Nothing to stage yet when only metadata is asked for (PEP 517's
    # get_requires_for_build_wheel in a folder last built in another mode).
    target.mkdir(parents=True, exist_ok=True)
    _sync_staged(files, Path(source_dir), target)
    # An __init__ makes the directory importable; buildkit's packaging replaces it with the
    # discovery modules (buildkit.package.discovery), which describe the files finally shipped.
    write_text_if_changed(target / "__init__.py", f'"""Native libraries and headers ({data_package})."""\n')
    return WheelLayout([data_package], {data_package: target.as_posix()},
                       {data_package: sorted(files)})


def _sync_staged(files: Sequence[str], source_dir: Path, target: Path) -> None:
    """Make ``target`` hold exactly ``files`` from ``source_dir``: every setup() call stages
    them (``--version`` and ``egg_info`` too), so only a file whose size or mtime differs
    from its staged copy is copied again (copy2 keeps the mtime), and a file a previous
    build staged that is no longer installed is removed."""
    wanted = set(files) | {"__init__.py"}
    for folder, _, names in os.walk(target, topdown=False):
        for name in names:
            path = Path(folder) / name
            if path.relative_to(target).as_posix() not in wanted:
                path.unlink()
        if Path(folder) != target and not any(Path(folder).iterdir()):
            Path(folder).rmdir()
    for rel in files:
        source, dest = source_dir / rel, target / rel
        have, want = _stamp(dest), _stamp(source)
        if have is None or have != want or source.is_symlink() != dest.is_symlink():
            dest.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(dest):
                dest.unlink()
            shutil.copy2(source, dest, follow_symlinks=False)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def installed_module_path(root: Path, dotted_name: str) -> Path | None:
    """Where CMake installed a Python extension module, by the suffixes this interpreter imports."""
    *package, module = dotted_name.split(".")
    folder = root.joinpath(*package)
    # Only this interpreter's suffixes, in the order it tries them (its own, the stable ABI's,
    # a bare `.so`, which cpp_extension's no_python_abi_suffix gives): a module left over
    # from another Python version must never end up in this wheel.
    for suffix in EXTENSION_SUFFIXES:
        path = folder / (module + suffix)
        if path.is_file():
            return path
    return None
