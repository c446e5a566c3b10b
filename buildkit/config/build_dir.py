"""``build-dir``'s placeholders: which ones exist, and where every interpreter's folder lies.

The default, ``build/{soabi}``, gives each interpreter ABI a build folder of its own
(``_util/interpreter.py`` says why).  A ``build-dir`` without a placeholder is one
folder for every interpreter: switching Python then configures again there.  A literal
brace is written twice, as in Python's format syntax.
"""

from __future__ import annotations

import os
import string
from pathlib import Path

from buildkit._util.interpreter import placeholders
from buildkit.errors import ConfigError

PLACEHOLDER_MEANINGS = {
    "soabi": "the interpreter's extension ABI, e.g. `cpython-312-x86_64-linux-gnu`",
    "cache_tag": "`sys.implementation.cache_tag`, e.g. `cpython-312`",
}


def _fields(template: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:  # a lone `{` or `}`
        raise ConfigError(f"`{template}` is not a valid folder template ({error}).",
                          "Write a literal brace twice (`{{`, `}}`).") from None
    names = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in PLACEHOLDER_MEANINGS or spec or conversion:
            shown = ", ".join(f"`{{{key}}}` ({meaning})" for key, meaning in PLACEHOLDER_MEANINGS.items())
            raise ConfigError(
                f"`{template}` uses the placeholder `{{{name}{'!' + conversion if conversion else ''}"
                f"{':' + spec if spec else ''}}}`, which buildkit does not fill.",
                f"The placeholders are {shown}. scikit-build-core's `{{wheel_tag}}`, `{{build_type}}` and "
                "`{state}` are not offered: develop and wheel builds share one build folder.")
        names.append(name)
    return names


def check_build_dir(value: Path) -> bool:
    """The ``check`` of the ``build-dir`` setting: its placeholders are known ones."""
    _fields(str(value))
    expanded = str(value).format_map(placeholders())
    if not expanded.strip() or "\0" in expanded:
        raise ConfigError(f"`{value}` names no folder.", "Set it to a folder such as \"build/{soabi}\".")
    return True


def is_templated(template: str) -> bool:
    return bool(_fields(template))


def every_interpreter_glob(template: str) -> str:
    """``template`` with each placeholder as ``*``: a glob on every interpreter's folder."""
    return "".join(literal.replace("[", "[[]").replace("*", "[*]").replace("?", "[?]") + ("*" if name else "")
                   for literal, name, _, _ in string.Formatter().parse(template))


def template_base(template: str) -> str:
    """The folders of ``template`` before its first placeholder (``build`` for ``build/{soabi}``);
    ``""`` when the first folder holds one."""
    base = []
    for part in Path(template).parts:
        if _fields(part):
            break
        base.append(part)
    return os.path.join(*base) if base else ""
