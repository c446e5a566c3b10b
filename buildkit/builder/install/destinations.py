"""Where an install may write: into its prefix (and CMake code into the project's own
folders), nowhere else.

A rule's ``DESTINATION`` is relative to the prefix, so that ``cmake --install --prefix``
moves it: into the package tree for develop, into a staging tree for a wheel.  An
absolute one is not moved.  ``${CMAKE_INSTALL_PREFIX}/docs`` is one too: CMake expands
the variable when it configures, and ``cmake_install.cmake`` holds the absolute path.
A destination that climbs out with ``..`` is moved and still lands outside.

Two checks, both failing loudly:

* before anything installs, every rule's ``file(INSTALL DESTINATION ...)``, and the
  paths that ``install(CODE)``/``install(SCRIPT)`` code plainly writes (``file(WRITE
  /abs ...)``, ``file(COPY ... DESTINATION /abs)``, ``configure_file(in /abs)``);
* after an install, every file CMake reports written (its install manifest) must be
  inside the prefix, also through symbolic links.

``install(CODE|SCRIPT)`` runs arbitrary CMake: a write through ``execute_process``, a
computed path or a file the manifest does not list escapes both.  Only a sandbox could
contain it (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from buildkit.builder.build_state import CMAKE_CACHE, WHEEL_DIRS
from buildkit.builder.install.script import SCRIPT, Command, InstallUnit, UnreadableScript, commands
from buildkit.errors import BuildkitError

PREFIX_VARIABLE = "${CMAKE_INSTALL_PREFIX}"
_WORDS = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s"]+')
_HEADER = re.compile(r"^# Install script for directory: (.+)$", re.MULTILINE)
_CONFIGURED_PREFIX = re.compile(r'set\(CMAKE_INSTALL_PREFIX "([^"]*)"\)')
_INCLUDED = re.compile(r'include\("([^"]+)"\)')
# scikit-build-core's platlib folder, where wheel-root mode defines it (package/wheel_root.py).
_PLATLIB = re.compile(r"^SKBUILD_PLATLIB_DIR:\w+=(.+)$", re.MULTILINE)
# file() subcommands that write, and which of their arguments name what they write:
# an index among the positional arguments, "all", or the keyword the path follows.
_FILE_WRITES: dict[str, int | str] = {
    "WRITE": 0, "APPEND": 0, "TOUCH": "all", "TOUCH_NOCREATE": "all", "MAKE_DIRECTORY": "all",
    "REMOVE": "all", "REMOVE_RECURSE": "all", "RENAME": 1, "COPY_FILE": 1, "CREATE_LINK": 1, "DOWNLOAD": 1,
    "COPY": "DESTINATION", "INSTALL": "DESTINATION", "CONFIGURE": "OUTPUT", "GENERATE": "OUTPUT",
}
# CMake writes each rule's file(INSTALL) on one line; reading those lines with a pattern costs
# a tenth of splitting a script of 8,000 headers into commands.
_GENERATED_INSTALL = re.compile(r'^\s*file\((INSTALL DESTINATION "[^\n]*)\)\s*$', re.MULTILINE)
# What may write, besides those lines: a rule's text without any is not split into commands.
_MAY_WRITE = re.compile(r"(?:file|configure_file|include)\s*\((?!INSTALL DESTINATION )", re.IGNORECASE)
_EXPANDED_AT_CONFIGURE = ("is absolute: `${CMAKE_INSTALL_PREFIX}/...` in a DESTINATION is expanded when CMake "
                          "configures, so a wheel build's install does not move it")
_KINDS = {"FILE": "install(FILES)", "PROGRAM": "install(PROGRAMS)", "DIRECTORY": "install(DIRECTORY)"}
_SHOWN = 8  # escapes listed by name in one error


@dataclass(frozen=True)
class Escape:
    """One install rule that writes outside where it may."""

    cmakelists: str  # the CMakeLists.txt that declared the rule, or its cmake_install.cmake
    rule: str  # e.g. "install(FILES) of notes.txt"
    destination: str  # as cmake_install.cmake has it
    why: str
    instead: str  # the relative form to use


def _words(arguments: str) -> list[str]:
    return _WORDS.findall(arguments)


def _unquoted(word: str) -> str:
    return word[1:-1] if len(word) >= 2 and word[0] == word[-1] == '"' else word


def _climbs_out(relative: str) -> tuple[bool, str]:
    """Whether a path relative to the prefix leaves it with ``..``, and the path without the
    ``..`` that leave it (``share/../../up`` -> ``up``): the destination it was likely meant as."""
    out, kept = False, []
    for part in relative.split("/"):
        if part in ("", "."):
            continue
        if part != "..":
            kept.append(part)
        elif kept:
            kept.pop()
        else:
            out = True
    return out, "/".join(kept)


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


class DestinationCheck:
    """The static check of one install's scripts, before anything is installed."""

    def __init__(self, install_prefix: Path, build_dir: Path, install_root: Path | None = None):
        self.install_prefix = str(Path(install_prefix).absolute())
        # Where the install may write: the prefix, or the wheel's root that install-dir moved it below.
        self.install_root = str(Path(install_root or install_prefix).absolute())
        # The prefix's folder under that root ("" when they are one), which `..` may climb out of.
        below = posixpath.relpath(self.install_prefix, self.install_root)
        self.prefix_folder = "" if below == "." else below
        self.build_dir = str(Path(build_dir).absolute())
        self.wheel_dirs = str(Path(self.build_dir) / WHEEL_DIRS)
        self.top_script = Path(self.build_dir) / SCRIPT
        top = _read(self.top_script)
        configured = _CONFIGURED_PREFIX.search(top)
        # The configure's prefix (the project's package folder): CMake code that writes
        # there, or into the source and build folders, stays in the project.
        self.configured_prefix = configured.group(1) if configured else None
        # Wheel-root mode names this install's root in SKBUILD_PLATLIB_DIR (the staging tree
        # for a wheel): a CMakeLists may install to that absolute folder.
        platlib = _PLATLIB.search(_read(Path(self.build_dir) / CMAKE_CACHE))
        self.platlib = platlib.group(1).strip() if platlib else None
        source = _HEADER.search(top)
        self.writable = [root for root in (self.install_root, self.configured_prefix, self.build_dir,
                                           source.group(1).strip() if source else None) if root]
        self._cmakelists: dict[Path, str] = {}

    # ------------------------------------------------------------------ entry
    def check_units(self, units: Iterable[InstallUnit]) -> None:
        """Refuse, naming each, the rules among ``units`` that an install of all components
        runs (not EXCLUDE_FROM_ALL) and that would write outside."""
        escapes: list[Escape] = []
        for unit in units:
            if unit.active:
                escapes += self.escapes(unit.script, unit.text)
        self._refuse(escapes)

    def check_scripts(self) -> None:
        """The same check over whole scripts, for an install script read as one piece."""
        escapes: list[Escape] = []
        for script in _script_tree(self.top_script):
            escapes += self.escapes(script, _read(script))
        self._refuse(escapes)

    def escapes(self, script: Path, text: str) -> list[Escape]:
        """The escapes of one rule's text (or a whole script's) from ``script``."""
        escapes = [escape for line in _GENERATED_INSTALL.findall(text)
                   if (escape := self._install_escape(script, line))]
        if _MAY_WRITE.search(text):
            # Text the reader cannot split is run whole; the manifest check still applies.
            with contextlib.suppress(UnreadableScript):
                escapes += self._code_escapes(script, commands(text))
        return escapes

    # ------------------------------------------------------------ the rules
    def _install_escape(self, script: Path, arguments: str) -> Escape | None:
        """The escape of a ``file(INSTALL DESTINATION ...)`` as CMake writes it, given its arguments."""
        word = _WORDS.match(arguments, len("INSTALL DESTINATION "))
        assert word is not None, "CMake writes the destination quoted, its closing quote included"
        destination = _unquoted(word.group())
        verdict = self._verdict(destination)
        if verdict is None:
            return None
        return Escape(self._where(script), self._describe(_words(arguments)), destination, *verdict)

    def _verdict(self, destination: str) -> tuple[str, str] | None:
        """Why ``destination`` leaves the prefix and what to write instead; None when it stays inside."""
        if destination == PREFIX_VARIABLE or destination.startswith(PREFIX_VARIABLE + "/"):
            below = destination[len(PREFIX_VARIABLE):]
            if not _climbs_out(f"{self.prefix_folder}/{below}")[0]:
                return None  # inside the prefix, or inside the wheel's root that holds an install-dir prefix
            kept = _climbs_out(below)[1]
            return ("climbs out of the prefix with '..'" if not self.prefix_folder else
                    f"climbs out of the wheel's root {self.install_root} with '..'",
                    f"`DESTINATION {kept}`" if kept else "a folder inside the package, e.g. `DESTINATION share`")
        if not posixpath.isabs(destination) and not re.match(r"^[A-Za-z]:[/\\]", destination):
            return None  # another variable: what it expands to is seen by the manifest check
        if _inside(posixpath.normpath(destination), [self.wheel_dirs]):
            return None  # scikit-build-core's SKBUILD_*_DIR folders, which buildkit makes and packs
        if self.platlib == self.install_root and _inside(posixpath.normpath(destination), [self.platlib]):
            return None  # `DESTINATION ${SKBUILD_PLATLIB_DIR}`: the folder this install writes to
        configured = self.configured_prefix
        if configured and _inside(destination, [configured]):
            return (_EXPANDED_AT_CONFIGURE, f"`DESTINATION {posixpath.relpath(destination, configured)}`")
        return ("is absolute: no install prefix moves it",
                "a relative destination such as `DESTINATION share/<name>` or `DESTINATION ${CMAKE_INSTALL_DATADIR}`")

    def _code_escapes(self, script: Path, found: list[Command]) -> list[Escape]:
        """What install(CODE) and install(SCRIPT) plainly write outside the project's folders."""
        escapes = []
        for command in found:
            if command.name == "include" and (included := _INCLUDED.match(command.text)):
                path = Path(included.group(1))
                if path.name != SCRIPT and path.is_file():
                    try:
                        inner = commands(_read(path))
                    except UnreadableScript:
                        continue
                    escapes += [Escape(self._where(script), f"install(SCRIPT {path})", target,
                                       f"is written by `{call}` outside the project and the install prefix",
                                       _CODE_INSTEAD) for call, target in self._writes(inner)]
        escapes += [Escape(self._where(script), "install(CODE)", target,
                           f"is written by `{call}` outside the project and the install prefix", _CODE_INSTEAD)
                    for call, target in self._writes(found)]
        return escapes

    def _writes(self, found: list[Command]) -> list[tuple[str, str]]:
        """(the command, the path) for each path these commands write outside the writable folders."""
        written = []
        for command in found:
            words = [_unquoted(word) for word in _words(command.arguments)]
            if command.name == "configure_file" and len(words) >= 2:
                targets = [words[1]]
            elif (command.name == "file" and words and words[0] in _FILE_WRITES
                  and words[:2] != ["INSTALL", "DESTINATION"]):  # CMake's own form: _install_escape's
                targets = _targets(words[1:], _FILE_WRITES[words[0]])
            else:
                continue
            for target in targets:
                path = self._resolved(target)
                if path is not None and not _inside(path, self.writable):
                    written.append((f"{command.name}({words[0]} ...)", target))
        return written

    def _resolved(self, target: str) -> str | None:
        """The path a script argument names, None when it depends on what only CMake knows."""
        path = target.replace(PREFIX_VARIABLE, self.install_prefix).replace("$ENV{DESTDIR}", "")
        if "$" in path or not path:
            return None
        return posixpath.normpath(posixpath.join(self.build_dir, path))  # cmake -P runs in the build folder

    # ----------------------------------------------------------- reporting
    def _describe(self, words: list[str]) -> str:
        kind = words[4] if len(words) > 4 and words[3] == "TYPE" else ""
        files = [posixpath.basename(_unquoted(word).rstrip("/")) for word in
                 words[words.index("FILES") + 1:] if word.startswith('"')] if "FILES" in words else []
        what = _KINDS.get(kind, "install(TARGETS)" if kind.endswith(("LIBRARY", "EXECUTABLE")) else "install rule")
        if any("/CMakeFiles/Export/" in word for word in words):
            what = "install(EXPORT)"
        return f"{what} of {', '.join(files[:3])}" if files else what

    def _where(self, script: Path) -> str:
        if script not in self._cmakelists:
            header = _HEADER.search(_read(script)[:4096])
            self._cmakelists[script] = (f"{header.group(1).strip()}/CMakeLists.txt" if header else str(script))
        return self._cmakelists[script]

    def _refuse(self, escapes: list[Escape]) -> None:
        if not escapes:
            return
        lines = [f"- {e.cmakelists}: {e.rule}, destination {e.destination} {e.why}; use {e.instead}"
                 for e in escapes[:_SHOWN]]
        if len(escapes) > _SHOWN:
            lines.append(f"- and {len(escapes) - _SHOWN} more")
        raise BuildkitError(
            f"{len(escapes)} install rule(s) would write outside the install prefix {self.install_prefix}"
            f"{f' and the wheel root {self.install_root} that holds it' if self.prefix_folder else ''}; "
            "buildkit installed nothing:\n" + "\n".join(lines),
            "Install into a destination relative to the prefix (`DESTINATION docs`, or GNUInstallDirs' "
            "`${CMAKE_INSTALL_DATADIR}`): buildkit points the prefix at the package tree, or at a wheel's "
            "staging tree.")


_CODE_INSTEAD = ("a path under `${CMAKE_INSTALL_PREFIX}` (written `\\${CMAKE_INSTALL_PREFIX}` inside "
                 "install(CODE \"...\"), so that it is expanded when the install runs)")


def _targets(arguments: list[str], which: int | str) -> list[str]:
    if which == "all":
        return arguments
    if isinstance(which, int):
        return arguments[which:which + 1]
    return [arguments[i + 1] for i, word in enumerate(arguments[:-1]) if word == which]


def _read(script: Path) -> str:
    try:
        return Path(script).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _script_tree(top: Path) -> list[Path]:
    """``top`` and the cmake_install.cmake scripts it includes, found without parsing it."""
    found, pending = [], [top]
    while pending:
        script = pending.pop(0)
        if script in found:
            continue
        found.append(script)
        pending += [Path(path) for path in _INCLUDED.findall(_read(script)) if Path(path).name == SCRIPT]
    return found


def check_written(paths: Iterable[str], install_prefix: Path, build_dir: Path) -> None:
    """Refuse an install that wrote any of ``paths`` (its manifest) outside ``install_prefix``
    (the install's root: the wheel's root for an install-dir prefix; or the build folder's
    SKBUILD_*_DIR folders), also through a symbolic link in the
    prefix.  Each folder is resolved once: a manifest holds thousands of files in a few
    hundred folders."""
    wheel_dirs = os.path.realpath(Path(build_dir).absolute() / WHEEL_DIRS)
    paths = [path for path in paths
             if not (path.startswith(wheel_dirs) and _inside(os.path.realpath(path), [wheel_dirs]))]
    prefix = str(Path(install_prefix).absolute())
    real_prefix = os.path.realpath(prefix)
    below = prefix.rstrip("/") + "/"
    verdicts: dict[str, bool] = {prefix: True}  # folder -> inside the prefix, links followed

    def inside(folder: str) -> bool:
        if folder not in verdicts:
            parent = os.path.dirname(folder)
            verdicts[folder] = (folder.startswith(below) and parent != folder and inside(parent)
                                and (not os.path.islink(folder) or _inside(os.path.realpath(folder), [real_prefix])))
        return verdicts[folder]

    outside = []
    for path in paths:
        # Most entries are plain absolute paths below the prefix: normalised only when they are not.
        normal = path if path.startswith(below) and "/." not in path and "//" not in path else \
            os.path.normpath(os.path.join(prefix, path))
        folder, _, name = normal.rpartition("/")
        if not inside(folder or "/"):
            outside.append(os.path.join(os.path.realpath(folder or "/"), name))
    if outside:
        shown = "\n".join(f"- {path}" for path in outside[:_SHOWN])
        more = f"\n- and {len(outside) - _SHOWN} more" if len(outside) > _SHOWN else ""
        raise BuildkitError(
            f"The install wrote {len(outside)} file(s) outside the install prefix {prefix} (CMake's install "
            f"manifest lists them):\n{shown}{more}",
            "Remove them, and give the rules that installed them a destination relative to the prefix "
            "(`DESTINATION docs`, `${CMAKE_INSTALL_DATADIR}`); no variable in a DESTINATION may climb out with "
            "'..'. The next build installs every rule again.")
