"""``when`` conditions: CMake cache variables joined by ``and``/``or``/``not``.

Settings use them (optional packages, scripts, package-data rules, CMake-built
extensions); they are checked when the settings are read and evaluated against
the CMake cache after configure.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Protocol

from buildkit.errors import ConfigError


class BoolCache(Protocol):
    """What rules need from a CMake cache; a missing entry raises KeyError."""

    def get_bool(self, name: str) -> bool: ...


# --- `when` conditions -----------------------------------------------------------

_TERM = r"(?:not\s+)?(?!(?:and|or|not)\b)[A-Za-z_][A-Za-z0-9_]*"
_CONDITION = re.compile(rf"\s*{_TERM}(?:\s+(?:and|or)\s+{_TERM})*\s*\Z")
# Disjunctive normal form: true when any group has all its (name, negated) terms true.
Condition = tuple[tuple[tuple[str, bool], ...], ...]


@cache
def parse_condition(text: str) -> Condition:
    """Parse ``NAME``, ``not NAME`` joined by ``and``/``or`` (``and`` binds tighter)."""
    if not _CONDITION.match(text):
        raise ConfigError(f"Cannot read the `when` condition {text!r}.",
                          "Use CMake cache variable names joined by 'and'/'or', each optionally "
                          "preceded by 'not', e.g. 'USE_CUDA and not USE_ROCM'.")
    groups = (re.split(r"\s+and\s+", group) for group in re.split(r"\s+or\s+", text.strip()))
    return tuple(tuple((term.split()[-1], len(term.split()) == 2) for term in group) for group in groups)


def evaluate_condition(text: str, cache: BoolCache | None) -> bool:
    def value(name: str) -> bool:
        # A variable the cache lacks is off, as an undefined variable is in CMake's if().
        try:
            return cache is not None and bool(cache.get_bool(name))
        except KeyError:
            return False

    return any(all(value(name) != negated for name, negated in group) for group in parse_condition(text))
