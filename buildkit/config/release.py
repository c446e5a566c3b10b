"""The variables that make a release build: ``BUILDKIT_RELEASE_VERSION`` and ``BUILDKIT_BUILD_NUMBER``.

Their older, project-named spellings (``<PREFIX>_BUILD_VERSION``, ``<PREFIX>_BUILD_NUMBER``)
are still read, except where the name starts with a prefix forwarded to CMake
(``CMAKE_EXAMPLE_BUILD_VERSION`` for a package ``cmake_example``): such a name reads as
a CMake variable, so setting it is refused with the name to use instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from buildkit.config.forwarding import FORWARDED_PREFIXES
from buildkit.errors import ConfigError

RELEASE_VERSION_VARIABLE = "BUILDKIT_RELEASE_VERSION"
RELEASE_NUMBER_VARIABLE = "BUILDKIT_BUILD_NUMBER"
# BuildOptions field of each project-named spelling -> the field it fills in.
PROJECT_NAMED = {"project_build_version": "build_version", "project_build_number": "build_number"}


def merge_project_named(values: dict[str, Any], sources: dict[str, str], names: Mapping[str, str]) -> str:
    """Fill the release version and number from their project-named spellings; returns the
    variable the version came from."""
    release_variable = names["build_version"]
    for old, new in PROJECT_NAMED.items():
        if values[old] is None:
            continue
        if names[old].startswith(FORWARDED_PREFIXES):
            raise ConfigError(
                f"{names[old]} is set, but a name starting with {', '.join(FORWARDED_PREFIXES)} reads as a CMake "
                "variable (buildkit forwards those to CMake), so buildkit no longer takes the release from it.",
                f"Set {names[new]} instead, or give [tool.buildkit] env-prefix a prefix that does not start "
                "with one of those.")
        if values[new] is not None and values[new] != values[old]:
            raise ConfigError(f"{names[new]}={values[new]!r} and {names[old]}={values[old]!r} disagree.",
                              f"Unset {names[old]}: {names[new]} is its newer name.")
        if values[new] is None:
            values[new], sources[new] = values[old], sources[old]
            if new == "build_version":
                release_variable = names[old]
    return release_variable
