"""CMake's install script, read as one unit per install rule, and re-run one rule at a time.

``cmake_install.cmake`` (one per directory with install rules) is code CMake
generates: a preamble of defaults, then one ``if(CMAKE_INSTALL_COMPONENT ...)``
block per install rule, ``include()`` blocks for subdirectories, and a postamble
that writes ``install_manifest.txt``.  The install step runs only the blocks whose
inputs changed (:mod:`buildkit.builder.install.step`), so each block stays CMake's
own code: a target's rpath rewrite, an export's stale-file removal and
``install(CODE)`` run exactly as ``cmake --install`` would run them.

A block that is a single ``file(INSTALL ... TYPE FILE|DIRECTORY ...)`` of source
files is a *tree* unit: once CMake has installed it, buildkit copies its changed
files itself.  Anything the reader does not recognise makes :func:`read_units`
return the reason, and the install step falls back to a whole ``cmake --install``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from buildkit.builder.build_state import INSTALL_SCRIPT

SCRIPT = INSTALL_SCRIPT
# `CMAKE_INSTALL_COMPONENT STREQUAL "<name>"`, or CMake 3.20's `"x${...}x" STREQUAL "x<name>x"`.
_COMPONENT_IF = re.compile(r'^\s*(?:CMAKE_INSTALL_COMPONENT\s+STREQUAL\s+"(?P<component>[^"]*)"'
                           r'|"x\$\{CMAKE_INSTALL_COMPONENT\}x"\s+STREQUAL\s+"x(?P<old>[^"]*)x")(?P<rest>.*)$', re.S)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ABSOLUTE_INPUT = re.compile(r'"(/[^"$;]*)"')
# What a block writes, which is no input of it: an absolute DESTINATION folder (scikit-build-core's
# `${SKBUILD_PLATLIB_DIR}`), whose time moves with every file written beside what it installs, and
# the files CMake lists as installed there.
_WRITTEN = re.compile(r'INSTALL DESTINATION "[^"]*"|list\(APPEND CMAKE_ABSOLUTE_DESTINATION_FILES[^)]*\)')
# file(INSTALL) options that change which files are installed under which name: such a
# rule always goes through CMake (the others only decide modes and membership, which a
# changed file keeps).
_NOT_A_TREE = {"RENAME", "OPTIONAL", "FOLLOW_SYMLINK_CHAIN"}
# The commands CMake writes for target, file, export and file-set rules; a block with any
# other command (an install(SCRIPT)'s include(), an install(CODE)'s code) runs whenever
# its component installs anything, as it would in every `cmake --install`.
_GENERATED = {"if", "elseif", "else", "endif", "file", "foreach", "endforeach", "set", "unset", "string", "list",
              "message"}


class UnreadableScript(Exception):
    """The install script has a shape this reader does not know; the message says where."""


@dataclass(frozen=True)
class Command:
    name: str  # lower case
    arguments: str  # the text between the parentheses
    text: str  # the whole invocation, as written


@dataclass
class InstallUnit:
    """One install rule's block of a ``cmake_install.cmake``."""

    key: str  # stable while the block's text is unchanged
    script: Path
    component: str
    text: str
    active: bool  # runs in an install of all components (not EXCLUDE_FROM_ALL)
    tree_type: str | None = None  # "FILE" or "DIRECTORY" for a tree unit
    destination: str | None = None  # relative to the prefix, for a tree unit
    sources: list[str] = field(default_factory=list)  # a tree unit's FILES, as written
    inputs: list[str] = field(default_factory=list)  # absolute paths the block reads
    runs_with_component: bool = False  # install(CODE/SCRIPT): runs when its component installs anything

    @property
    def is_tree(self) -> bool:
        return self.tree_type is not None


@dataclass
class InstallScripts:
    preamble: str  # the top script's defaults (CMAKE_INSTALL_SO_NO_EXE, CMAKE_OBJDUMP...)
    units: list[InstallUnit]
    scripts: list[Path]  # every cmake_install.cmake read, top first


def commands(text: str) -> list[Command]:
    """The command invocations of CMake code, skipping comments, quoted and bracket arguments."""
    found: list[Command] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == "#":
            index = _skip_comment(text, index)
        elif char.isalpha() or char == "_":
            match = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*\(").match(text, index)
            if match is None:
                raise UnreadableScript(f"unexpected text at offset {index}: {text[index:index + 40]!r}")
            end = _closing_parenthesis(text, match.end())
            found.append(Command(match.group().rstrip("( \t\n").lower(), text[match.end():end], text[index:end + 1]))
            index = end + 1
        else:
            index += 1
    return found


def _skip_comment(text: str, index: int) -> int:
    bracket = re.compile(r"#\[(=*)\[").match(text, index)
    if bracket:
        close = text.find(f"]{bracket.group(1)}]", bracket.end())
        if close < 0:
            raise UnreadableScript("an unterminated bracket comment")
        return close + len(bracket.group(1)) + 2
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline


def _closing_parenthesis(text: str, index: int) -> int:
    """The offset of the ``)`` that closes the argument list starting at ``index``."""
    depth = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            quoted = _QUOTED.match(text, index)
            index = quoted.end() if quoted else len(text)
            continue
        if char == "[" and (bracket := re.compile(r"\[(=*)\[").match(text, index)):
            close = text.find(f"]{bracket.group(1)}]", bracket.end())
            if close < 0:
                raise UnreadableScript("an unterminated bracket argument")
            index = close + len(bracket.group(1)) + 2
            continue
        if char == "#":
            index = _skip_comment(text, index)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        index += 1
    raise UnreadableScript("an unclosed argument list")


def _blocks(script: Path) -> list[list[Command]]:
    """The script's top-level statements: an ``if`` ... ``endif`` block, or one command."""
    blocks: list[list[Command]] = []
    depth = 0
    for command in commands(script.read_text(encoding="utf-8")):
        if depth == 0:
            blocks.append([])
        blocks[-1].append(command)
        depth += {"if": 1, "endif": -1}.get(command.name, 0)
        if depth < 0:
            raise UnreadableScript(f"{script}: an endif() without its if()")
    if depth:
        raise UnreadableScript(f"{script}: an if() without its endif()")
    return blocks


def _subdirectory_scripts(block: list[Command]) -> list[Path] | None:
    head, body = block[0], block[1:-1]
    if head.name != "if" or head.arguments.strip() != "NOT CMAKE_INSTALL_LOCAL_ONLY" or not body:
        return None
    if any(command.name != "include" for command in body):
        return None
    paths = [_QUOTED.search(command.arguments) for command in body]
    if any(path is None for path in paths):
        raise UnreadableScript(f"an include() without a quoted path: {body[paths.index(None)].text}")
    return [Path(path.group(1)) for path in paths if path is not None]


def read_units(top: Path) -> InstallScripts:
    """Every install rule of ``top`` (a build folder's ``cmake_install.cmake``) and the
    scripts it includes, in the order ``cmake --install`` runs them."""
    units: list[InstallUnit] = []
    seen: dict[str, int] = {}
    scripts: list[Path] = []
    preamble = _read_script(Path(top), units, seen, scripts)
    return InstallScripts(preamble, units, scripts)


def _read_script(script: Path, units: list[InstallUnit], seen: dict[str, int], scripts: list[Path]) -> str:
    scripts.append(script)
    preamble: list[str] = []
    started = ended = False
    for block in _blocks(script):
        head = block[0]
        component = _COMPONENT_IF.match(head.arguments) if head.name == "if" else None
        included = _subdirectory_scripts(block) if head.name == "if" else None
        if component is not None or included is not None:
            if ended:
                raise UnreadableScript(f"{script}: an install rule after the install manifest is written")
            started = True
            if included is not None:
                for child in included:
                    _read_script(child, units, seen, scripts)
            # (component is set here.)  CMake writes some rules' blocks empty (a target with nothing to install).
            elif component is not None and len(block) > 2:
                units.append(_unit(script, block, component, seen))
        elif not started:
            preamble.append(head.text if len(block) == 1 else "\n".join(c.text for c in block))
        else:
            ended = True  # the postamble: CMake's own install_manifest.txt, which buildkit replaces
    return "\n".join(preamble)


def _unit(script: Path, block: list[Command], component: re.Match[str], seen: dict[str, int]) -> InstallUnit:
    text = "\n".join(command.text for command in block)
    digest = hashlib.sha256(f"{script}\n{text}".encode()).hexdigest()[:16]
    seen[digest] = seen.get(digest, 0) + 1
    name = component.group("component") if component.group("component") is not None else component.group("old")
    unit = InstallUnit(key=f"{digest}-{seen[digest]}", script=script, component=name,
                       text=text, active="OR NOT CMAKE_INSTALL_COMPONENT" in component.group("rest"))
    unit.inputs = sorted({match for match in _ABSOLUTE_INPUT.findall(_WRITTEN.sub("", text))})
    body = block[1:-1]
    unit.runs_with_component = not unit.inputs or any(
        command.name not in _GENERATED and not _is_strip(body, index) for index, command in enumerate(body))
    if len(body) == 1 and body[0].name == "file":
        _read_tree(unit, body[0].arguments)
    return unit


def _is_strip(body: list[Command], index: int) -> bool:
    """The ``execute_process(strip)`` CMake writes under ``if(CMAKE_INSTALL_DO_STRIP)``."""
    return (body[index].name == "execute_process" and index > 0 and body[index - 1].name == "if"
            and body[index - 1].arguments.strip() == "CMAKE_INSTALL_DO_STRIP")


def _read_tree(unit: InstallUnit, arguments: str) -> None:
    """Make ``unit`` a tree unit when its one ``file(INSTALL)`` copies plain source paths
    into a folder under the prefix."""
    words = re.findall(r'"(?:[^"\\]|\\.)*"|[^\s"]+', arguments)
    if words[:2] != ["INSTALL", "DESTINATION"] or len(words) < 6:
        return
    destination = words[2].strip('"')
    if not destination.startswith("${CMAKE_INSTALL_PREFIX}") or "$" in destination[len("${CMAKE_INSTALL_PREFIX}"):]:
        return
    if words[3] != "TYPE" or words[4] not in {"FILE", "DIRECTORY"} or words[5] != "FILES":
        return
    sources = []
    for word in words[6:]:
        if not word.startswith('"'):
            if word in _NOT_A_TREE:
                return
            break
        sources.append(word[1:-1])
    if not sources or any("$" in s or "\\" in s or not s.startswith("/") for s in sources):
        return
    if any(word in _NOT_A_TREE for word in words[6:]):
        return
    unit.tree_type = words[4]
    unit.destination = destination[len("${CMAKE_INSTALL_PREFIX}"):].lstrip("/")
    unit.sources = sources


def partial_script(scripts: InstallScripts, runs: list[tuple[InstallUnit, bool]], output: Path) -> str:
    """A script that runs the given units in order (``True``: copy even files CMake thinks
    are up to date) and writes each unit's installed files to ``output``."""
    lines = [scripts.preamble, f'set(_buildkit_output "{output}")', 'file(WRITE "${_buildkit_output}" "")']
    for unit, always in runs:
        lines += ['set(CMAKE_INSTALL_MANIFEST_FILES "")',
                  "set(ENV{CMAKE_INSTALL_ALWAYS} 1)" if always else "unset(ENV{CMAKE_INSTALL_ALWAYS})",
                  unit.text,
                  'string(REPLACE ";" "\\n" _buildkit_files "${CMAKE_INSTALL_MANIFEST_FILES}")',
                  f'file(APPEND "${{_buildkit_output}}" "unit {unit.key}\\n${{_buildkit_files}}\\n")']
    return "\n".join(lines) + "\n"


def read_partial_output(output: Path) -> dict[str, list[str]]:
    """Unit key -> the files CMake installed (or found up to date) for it."""
    installed: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.read_text(encoding="utf-8").splitlines():
        if line.startswith("unit "):
            current = installed.setdefault(line[5:], [])
        elif line and current is not None:
            current.append(line)
    return installed
