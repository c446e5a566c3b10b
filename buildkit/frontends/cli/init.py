"""``buildkit init``: scaffold a new project from ``templates/project/``.

The project it writes has the layout of ``examples/minimal``: a CMake C++ shared
library, a binding library linked to it, the one-line ``_C`` stub, a Python package,
a ``setup.py`` that calls :func:`buildkit.setup`, a ``pyproject.toml`` with a
``[tool.buildkit]`` table, a pytest test, a ``.gitignore`` and a CI workflow.
``--cuda`` adds a ``.cu`` kernel with a CPU fallback, ``--split`` the
library-only / python-only wheel split.

Templates are plain files under ``templates/project/`` (they ship in buildkit's
wheel as ``buildkit/templates/project``), filled with :class:`string.Template`:

* ``$name`` / ``${name}`` placeholders are lower-case only (``name``, ``prefix``,
  ``camel``...), so CMake's ``${CMAKE_CURRENT_SOURCE_DIR}``, generator expressions
  ``$<...>``, ``$ORIGIN`` and GitHub's ``${{ ... }}`` pass through unchanged;
  ``$$`` is a literal ``$``.
* A line holding nothing but a *block* placeholder (``$cuda_language``) is replaced
  by ``templates/project/_blocks/<block>.<ext>.in``, filled the same way and
  indented like the placeholder, when the block's option is on, and removed when
  it is off.
"""

from __future__ import annotations

import argparse
import keyword
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import TextIO

from buildkit._util import console
from buildkit._util.resources import templates_dir
from buildkit.errors import BuildkitError, exit_on_error

# ProjectTemplate's placeholders: lower-case identifiers only.
_PLACEHOLDER = r"""
    \$(?:
      (?P<escaped>\$) |
      (?P<named>[a-z][a-z0-9_]*) |
      {(?P<braced>[a-z][a-z0-9_]*)} |
      (?P<invalid>(?!))
    )
    """


class ProjectTemplate(Template):
    """``string.Template`` whose placeholders are lower-case identifiers only."""

    pattern = _PLACEHOLDER  # type: ignore[assignment]  # a str, as string.Template documents; it compiles it
    flags = re.VERBOSE  # not IGNORECASE: ${CMAKE_...} is CMake's


@dataclass(frozen=True)
class Choices:
    """What the user picked."""

    dist_name: str  # [project] name, as typed
    cuda: bool
    split: bool

    @property
    def name(self) -> str:
        """The import package, the CMake target and the C++ namespace."""
        return self.dist_name.lower().replace("-", "_").replace(".", "_")

    def values(self) -> dict[str, str]:
        name = self.name
        exports = ["add", "built_with_cuda", "cuda_architectures", "cuda_available"] if self.cuda else ["add"]
        return {
            "name": name,
            "dist_name": self.dist_name,
            "prefix": name.upper(),
            "camel": "".join(part.capitalize() for part in name.split("_") if part),
            "library_distribution": f"lib{name}".replace("_", "-"),
            "wheel_kind": "split" if self.split else "full",
            "exports": ", ".join(exports),
            "all_names": ", ".join(f'"{e}"' for e in exports),
            "noqa": "  # noqa: E402 - after the preload" if self.split else "",
        }

    def blocks(self) -> dict[str, bool]:
        return {"cuda_language": self.cuda, "cuda_sources": self.cuda, "cuda_settings": self.cuda,
                "cuda_readme": self.cuda, "cuda_ci": self.cuda, "native_preload": self.split,
                "split_settings": self.split, "split_readme": self.split}


def _always(_: Choices) -> bool:
    return True


# (template under templates/project, destination (itself a template), when)
MANIFEST: tuple[tuple[str, str, Callable[[Choices], bool]], ...] = (
    ("CMakeLists.txt.in", "CMakeLists.txt", lambda c: not c.split),
    ("CMakeLists-split.txt.in", "CMakeLists.txt", lambda c: c.split),
    ("cmake/Config.cmake.in.in", "cmake/${camel}Config.cmake.in", lambda c: c.split),
    ("include/core.h.in", "include/$name/$name.h", lambda c: not c.cuda),
    ("include/core-cuda.h.in", "include/$name/$name.h", lambda c: c.cuda),
    ("csrc/core.cpp.in", "csrc/$name.cpp", lambda c: not c.cuda),
    ("csrc/core-cuda.cpp.in", "csrc/$name.cpp", lambda c: c.cuda),
    ("csrc/kernel.cu.in", "csrc/${name}_cuda.cu", lambda c: c.cuda),
    ("csrc/python_bindings.cpp.in", "csrc/python_bindings.cpp", lambda c: not c.cuda),
    ("csrc/python_bindings-cuda.cpp.in", "csrc/python_bindings.cpp", lambda c: c.cuda),
    ("csrc/stub.c.in", "csrc/stub.c", _always),
    ("package/__init__.py.in", "$name/__init__.py", _always),
    ("tests/test_package.py.in", "tests/test_$name.py", lambda c: not c.cuda),
    ("tests/test_package-cuda.py.in", "tests/test_$name.py", lambda c: c.cuda),
    ("setup.py.in", "setup.py", _always),
    ("pyproject.toml.in", "pyproject.toml", _always),
    ("version.txt.in", "version.txt", _always),
    ("README.md.in", "README.md", _always),
    ("gitignore.in", ".gitignore", _always),
    ("github/workflows/wheels.yml.in", ".github/workflows/wheels.yml", _always),
)

_DIST_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]$|^[A-Za-z]$")
# Names that would collide with something the generated project relies on.
_CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq std posix
""".split())  # noqa: SIM905  a word list reads better as text than as 90 quoted strings
_CMAKE_RESERVED = frozenset({"all", "clean", "help", "install", "package", "package_source", "test",
                             "edit_cache", "rebuild_cache", "list_install_components", "cuda", "python"})
_TAKEN = frozenset({"buildkit", "setuptools", "pytest", "cmake", "ninja", "pip", "wheel", "tests"})


def check_name(dist_name: str) -> str:
    """The import name for ``dist_name``; a BuildkitError says why a name can't be used."""
    if not _DIST_NAME.match(dist_name):
        raise BuildkitError(
            f"{dist_name!r} cannot be a project name: use letters, digits, '-', '_' or '.', starting "
            "with a letter and ending with a letter or digit.", "Pass another one with --name NAME.")
    name = Choices(dist_name, False, False).name
    reason = None
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        reason = "is a Python keyword"
    elif name in _CPP_KEYWORDS:
        reason = "is a C++ keyword (the C++ namespace has the project's name)"
    elif name in sys.stdlib_module_names:
        reason = "is the name of a module of Python's standard library"
    elif name in _CMAKE_RESERVED:
        reason = "is reserved by CMake as a target name"
    elif name in _TAKEN or name.endswith("_python"):
        reason = "would collide with a tool or a target the project uses"
    if reason:
        raise BuildkitError(f"The project name {dist_name!r} (import name {name!r}) {reason}.",
                            "Pass another one with --name NAME.")
    return name


def _fill(template_text: str, values: dict[str, str], blocks: dict[str, bool], where: str) -> str:
    """Expand block lines, then placeholders."""
    lines: list[str] = []
    for line in template_text.splitlines(keepends=True):
        match = re.fullmatch(r"([ \t]*)\$([a-z][a-z0-9_]*)\n?", line)
        if match and match.group(2) in blocks:
            if blocks[match.group(2)]:
                lines.extend(_indent(_read_block(match.group(2)), match.group(1)))
            continue
        lines.append(line)
    try:
        return ProjectTemplate("".join(lines)).substitute(values)
    except KeyError as missing:
        raise BuildkitError(f"buildkit's project template {where} uses ${missing.args[0]}, which init does not "
                            "define.", "This is a bug in buildkit; please report it.") from None


def _read_block(block: str) -> str:
    found = sorted((templates_dir() / "project" / "_blocks").glob(f"{block}.*.in"))
    if len(found) != 1:
        raise BuildkitError(f"buildkit's project template block {block!r} is missing.",
                            "Reinstall buildkit (pip install --force-reinstall setuptools-buildkit).")
    return found[0].read_text(encoding="utf-8")


def _indent(text: str, prefix: str) -> list[str]:
    return [(prefix + line if line.strip() else line) for line in text.splitlines(keepends=True)]


def render(choices: Choices) -> dict[str, str]:
    """Every file of the project: relative path -> content."""
    root = templates_dir() / "project"
    values, blocks = choices.values(), choices.blocks()
    files: dict[str, str] = {}
    for source, destination, when in MANIFEST:
        if not when(choices):
            continue
        path = ProjectTemplate(destination).substitute(values)
        template = root / source
        if not template.is_file():
            raise BuildkitError(f"buildkit's project template {template} is missing.",
                                "Reinstall buildkit (pip install --force-reinstall setuptools-buildkit).")
        files[path] = _fill(template.read_text(encoding="utf-8"), values, blocks, source)
    return files


@dataclass(frozen=True)
class Planned:
    path: str
    action: str  # "create", "overwrite" or "unchanged"


def plan(target: Path, files: dict[str, str], *, force: bool) -> list[Planned]:
    """What writing ``files`` under ``target`` does to each: ``create``, ``unchanged`` (the
    same content is there), ``overwrite`` (with ``force``), or ``exists`` (a refusal)."""
    planned = []
    for relative, content in files.items():
        path = target / relative
        parents = [target / folder for folder in Path(relative).parents if folder != Path(".")]
        blocked = any(folder.exists() and not folder.is_dir() for folder in parents)
        if blocked or path.is_dir():
            planned.append(Planned(relative, "exists"))
        elif not path.exists() and not path.is_symlink():
            planned.append(Planned(relative, "create"))
        elif path.is_file() and path.read_text(encoding="utf-8", errors="replace") == content:
            planned.append(Planned(relative, "unchanged"))
        elif path.is_file() and force:
            planned.append(Planned(relative, "overwrite"))
        else:
            planned.append(Planned(relative, "exists"))
    return planned


def _refusal(target: Path, planned: list[Planned], files: dict[str, str]) -> BuildkitError | None:
    refused = [p.path for p in planned if p.action == "exists"]
    if not refused:
        return None
    overwritable = [r for r in refused if (target / r).is_file()]
    if len(overwritable) < len(refused):  # a folder (or a file where a folder must go) is in the way
        others = [r for r in refused if r not in overwritable]
        return BuildkitError(f"buildkit init cannot write {', '.join(others)} in {target}: a folder or a file "
                             "is in the way. Nothing was written.", "Move it away, or initialise another folder.")
    return BuildkitError(
        f"buildkit init would overwrite {len(refused)} existing file(s) in {target}: {', '.join(refused)}. "
        "Nothing was written.",
        "Run it in an empty folder, move those files away, or pass --force to overwrite them "
        "(--dry-run lists what it would write).")


def init_project(target: Path, choices: Choices, *, force: bool = False, dry_run: bool = False,
                 out: TextIO | None = None) -> list[Planned]:
    """Write the project (or, with ``dry_run``, only list it); returns the plan.

    Nothing is written when any file would be refused: the listing marks those
    ``exists`` and a BuildkitError says what to do."""
    if target.exists() and not target.is_dir():
        raise BuildkitError(f"{target} exists and is not a folder.", "Pass a folder to buildkit init.")
    files = render(choices)
    planned = plan(target, files, force=force)
    refusal = _refusal(target, planned, files)
    features = ", ".join(f for f, on in (("CUDA", choices.cuda), ("split wheels", choices.split)) if on) or "C++"
    verb = "would write" if dry_run or refusal else "writing"
    console.output(f"buildkit init: {verb} project {choices.dist_name!r} (import {choices.name}; {features}) "
                   f"in {target}", out)
    width = max(len(p.action) for p in planned)
    for item in planned:
        console.output(f"  {item.action:<{width}}  {item.path}", out)
        if dry_run or refusal or item.action == "unchanged":
            continue
        path = target / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(files[item.path])
    if refusal:
        raise refusal
    if dry_run:
        console.output("(dry run: nothing written)", out)
    else:
        console.output(f"next: {_cd(target)}buildkit develop . && python -m pytest -q", out)
    return planned


def _cd(target: Path) -> str:
    """``cd <target> && `` as the user would type it (relative when under the current folder)."""
    here = Path.cwd().resolve()
    resolved = target.resolve()
    if resolved == here:
        return ""
    shown = resolved.relative_to(here).as_posix() if resolved.is_relative_to(here) else str(target)
    return f"cd {shlex.quote(shown)} && "


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="buildkit init",
        description="Scaffold a new project: a CMake C++ shared library, a Python package with a `_C` "
                    "extension linked to it, setup.py, pyproject.toml ([tool.buildkit]), a test and a CI "
                    "workflow. Refuses to overwrite existing files unless --force.")
    parser.add_argument("path", nargs="?", default=".", type=Path,
                        help="folder to create the project in (default: the current one)")
    parser.add_argument("--name", help="distribution name; the import name is it lower-cased with '-' "
                                       "replaced by '_' (default: the folder's name)")
    parser.add_argument("--cuda", action=argparse.BooleanOptionalAction, default=False,
                        help="add a CUDA kernel with a CPU fallback (USE_CUDA, <PREFIX>_CUDA_ARCH_LIST)")
    parser.add_argument("--split", action=argparse.BooleanOptionalAction, default=False,
                        help="support library-only / python-only split wheels")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.add_argument("--dry-run", "-n", action="store_true", help="list what would be written; write nothing")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``buildkit init [PATH] [--name NAME] [--cuda] [--split] [--force] [--dry-run]``."""
    return _init(build_parser().parse_args(argv))


@exit_on_error
def _init(args: argparse.Namespace) -> int:
    target = args.path.expanduser().absolute()
    dist_name = args.name or target.resolve().name
    check_name(dist_name)
    init_project(target, Choices(dist_name, args.cuda, args.split), force=args.force, dry_run=args.dry_run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
