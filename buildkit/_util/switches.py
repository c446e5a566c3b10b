"""The words that turn a switch on or off: one list for the strict option parser
(``config/parsing.parse_bool``) and for the readers that run before options are loaded
or where an error cannot be raised (the console's ``VERBOSE`` and ``CI``, the no-op develop's
``VERBOSE``, ``CMAKE_FRESH`` and ``CMAKE_ONLY``, an editable install's import hook's
``BUILDKIT_EDITABLE_REBUILD`` and ``BUILDKIT_EDITABLE_VERBOSE``).

Lean (``os`` only): the no-op develop's first stage imports it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # collections.abc is not loaded at start-up: the no-op develop goes without
if TYPE_CHECKING:
    from collections.abc import Mapping

# The editable install's switches (options, declared in config/options.py), also read at import
# time, where no options are loaded: the hook's own setting is the default there.
EDITABLE_REBUILD_VARIABLE = "BUILDKIT_EDITABLE_REBUILD"
EDITABLE_VERBOSE_VARIABLE = "BUILDKIT_EDITABLE_VERBOSE"
# No switch: the mark a rebuild on import puts into its build's environment, the projects it
# rebuilds (os.pathsep between them), so that an import of one of them there builds nothing.
REBUILDING_FOR_IMPORT = "BUILDKIT_REBUILDING_FOR_IMPORT"

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


def switch_or(name: str, default: bool, environ: Mapping[str, str] | None = None) -> bool | None:
    """A switch whose default was decided elsewhere (an editable install's hook, when it was
    written): unset is ``default``; a word is :func:`switch_word`'s verdict (None for one
    neither list has)."""
    value = (os.environ if environ is None else environ).get(name)
    return default if value is None else switch_word(value)
