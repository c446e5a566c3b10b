"""The words that turn a switch on or off: one list for the strict option parser
(``config/parsing.parse_bool``) and for the readers that run before options are loaded
or where an error cannot be raised (the console's ``VERBOSE`` and ``CI``, the no-op develop's
``VERBOSE``, ``CMAKE_FRESH`` and ``CMAKE_ONLY``).

Lean (``os`` only): the no-op develop's first stage imports it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # collections.abc is not loaded at start-up: the no-op develop goes without
if TYPE_CHECKING:
    from collections.abc import Mapping

TRUE_WORDS = ("1", "on", "yes", "true", "y", "enable", "enabled")
FALSE_WORDS = ("0", "off", "no", "false", "n", "disable", "disabled", "")


def switch_word(value: str) -> bool | None:
    """True or False for a word of the lists (any case, surrounding blanks ignored); None for
    any other word, which the strict parser refuses."""
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    return None


def switch_setting(name: str, environ: Mapping[str, str] | None = None) -> bool | None:
    """A switch that is off by default (``VERBOSE``, ``CMAKE_FRESH``) read as the options read
    it: unset is off, a word neither list has is None (loading the options then stops with an
    error naming it)."""
    return switch_word((os.environ if environ is None else environ).get(name, ""))


def verbose_setting(environ: Mapping[str, str] | None = None) -> bool | None:
    """``VERBOSE``, as :func:`switch_setting` reads it."""
    return switch_setting("VERBOSE", environ)
