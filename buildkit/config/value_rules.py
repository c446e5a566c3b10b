"""The rules a `[tool.buildkit]` value must follow beyond its type, one function each: the
``check`` of a setting's declaration (``config/settings.py``), and what other readers of the
same kind of value (entry-point names, `py-api`) use."""

from __future__ import annotations

import re

from buildkit.config.conditions import parse_condition
from buildkit.config.globs import check_glob
from buildkit.config.python_layout import inside_project


def is_dotted_name(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def is_condition(text: str) -> bool:
    parse_condition(text)  # raises a ConfigError that quotes the condition
    return True


def are_globs(patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        check_glob(pattern)  # raises a ConfigError that quotes the pattern
    return bool(patterns)


def is_entry_point(text: str) -> bool:
    return re.fullmatch(r"\s*[A-Za-z_][\w.]*\s*:\s*[A-Za-z_][\w.]*\s*", text) is not None


# The entry-points specification's recommended names (packaging.python.org, "Entry points
# specification"): a console script's name becomes a file in the environment's scripts
# folder and a command in a shell, so a path separator, whitespace or a shell
# metacharacter must never reach it; names of dots only (`.`, `..`) are folders.
SCRIPT_NAME_FORM = "letters, digits, `_`, `.` and `-`, not only dots"


def is_script_name(text: str) -> bool:
    return re.fullmatch(r"[\w.-]+", text, re.ASCII) is not None and text.strip(".") != ""


def is_module_path(text: str) -> bool:
    """A module file below the package folder ('' for none): identifiers joined by ``/``, so
    no absolute path and no ``..`` can take it out of the package."""
    return text == "" or (text.endswith(".py") and all(part.isidentifier() for part in text[:-3].split("/")))


def is_inside_project(text: str) -> bool:
    return inside_project(text) is not None


def are_inside_project(paths: tuple[str, ...]) -> bool:
    return all(map(is_inside_project, paths))


def is_distribution_name(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", text) is not None


# scikit-build-core's `wheel.py-api` values (buildkit.package.python_api says what each gives).
PY_API_FORM = re.compile(r"^(?:cp3(?P<minor>\d+)|py3|py2\.py3)$")


def is_py_api(text: str) -> bool:
    return PY_API_FORM.match(text) is not None


def is_positive(number: int) -> bool:
    return number > 0
