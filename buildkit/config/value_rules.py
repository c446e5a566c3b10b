"""The rules a `[tool.buildkit]` value must follow beyond its type, one function each: the
``check`` of a setting's declaration (``config/settings.py``), and what other readers of the
same kind of value (entry-point names, `py-api`) use."""

from __future__ import annotations

import re

from buildkit.config.conditions import parse_condition
from buildkit.config.globs import check_glob
from buildkit.config.python_layout import inside_project
from buildkit.errors import ConfigError


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


# scikit-build-core's `wheel.install-dir` may start with one of these to pick another wheel tree.
_WHEEL_TREE_VARIABLE = re.compile(r"^\$\{SKBUILD_(\w+)_DIR\}")
_INSTALL_DIR_EXAMPLE = 'e.g. `install-dir = "cmake_dirs"`'


def is_install_dir(text: str) -> bool:
    """``install-dir``: a folder below the wheel's root, written with ``/`` ('' for the root
    itself), so no install prefix it moves can leave the wheel."""
    if "\\" in text:
        raise ConfigError(f"{text!r} holds a backslash.",
                          f"Write the folder with `/` between its parts, {_INSTALL_DIR_EXAMPLE}.")
    tree = _WHEEL_TREE_VARIABLE.match(text)
    if tree is not None and tree.group(1) == "PLATLIB":
        raise ConfigError(f"{text!r} starts with ${{SKBUILD_PLATLIB_DIR}}, which install-dir does not expand.",
                          "install-dir is already relative to the wheel's root (SKBUILD_PLATLIB_DIR): write "
                          f"what follows it, {_INSTALL_DIR_EXAMPLE}.")
    if tree is not None:
        raise ConfigError(
            f"{text!r} puts the install into scikit-build-core's {tree.group(1).lower()} tree, which buildkit's "
            "install-dir does not offer.",
            "install-dir is a folder of the wheel's root (the package tree a develop installs into); install "
            f"into the other trees with `DESTINATION ${{SKBUILD_{tree.group(1)}_DIR}}` in the CMakeLists instead.")
    if "$" in text:
        raise ConfigError(f"{text!r} names a variable, which install-dir does not expand.",
                          f"Write the folder itself, relative to the wheel's root, {_INSTALL_DIR_EXAMPLE}.")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        raise ConfigError(f"{text!r} is absolute: the install would land outside the wheel.",
                          f"Write a folder relative to the wheel's root, {_INSTALL_DIR_EXAMPLE}.")
    if ".." in text.split("/"):
        raise ConfigError(f"{text!r} climbs out with '..': the install would land outside the wheel's root.",
                          f"Write a folder below the wheel's root, {_INSTALL_DIR_EXAMPLE}.")
    return True


def is_distribution_name(text: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", text) is not None


# scikit-build-core's `wheel.py-api` values (buildkit.package.python_api says what each gives).
PY_API_FORM = re.compile(r"^(?:cp3(?P<minor>\d+)|py3|py2\.py3)$")


def is_py_api(text: str) -> bool:
    return PY_API_FORM.match(text) is not None


def is_positive(number: int) -> bool:
    return number > 0
