"""Typed TOML tables: dataclasses whose fields declare the keys, read strictly.

A dataclass field made with :func:`setting` is a key of its table: the field's name
in kebab-case is the TOML key, its annotation the accepted type, its default the
default, and the metadata the documentation plus any rule the type cannot say.
:func:`read_table` turns a parsed TOML table into the dataclass's keyword
arguments, and :func:`describe` lists the keys for the generated reference, so the
docs and the validation come from the same declaration.

Annotations understood: ``str``, ``int``, ``bool``, ``Path`` (from a string), an ``Enum`` (by value), a
dataclass declared the same way (a sub-table), ``tuple[X, ...]`` and
``frozenset[X]`` (a TOML array), ``dict[str, X]`` (a table of values), ``X | None``
(an optional key: TOML has no null) and unions of scalars (``str | bool | int``).

Every problem is one :class:`ConfigError` whose message names the key with its
path (``[tool.buildkit] scripts[0].target``), the offending value and the
expected form.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import types
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import MISSING, dataclass
from functools import cache
from pathlib import Path
from typing import Any, Union

from buildkit.config.parsing import check_text
from buildkit.errors import ConfigError

_METADATA_KEY = "buildkit.setting"

# Where a value sits: the table's title, then keys and list indices,
# e.g. ("[tool.buildkit]", "scripts", 0, "target").
Location = tuple[str | int, ...]


@dataclass(frozen=True)
class Declaration:
    """What a field's metadata adds to its name, annotation and default."""

    doc: str
    kind: str | None = None  # shown in the docs and errors; None: derived from the annotation
    # A rule beyond the type, run on the converted value: returning False rejects it
    # as "must be <kind>"; raising ConfigError rejects it with that error's words.
    check: Callable[[Any], bool] | None = None
    lone_string: bool = False  # a single string stands for a one-item list (`include = "lib/*"`)
    derived: bool = False  # the default is computed from other values when the key is absent
    # Only a CMake build reads it: a project with `cmake = false` may not set it.
    needs_cmake: bool = False


def setting(doc: str, *, default: Any = MISSING, default_factory: Any = MISSING, kind: str | None = None,
            check: Callable[[Any], bool] | None = None, lone_string: bool = False, derived: bool = False,
            needs_cmake: bool = False) -> Any:
    """A dataclass field that is a TOML key; without a default the key is required."""
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata={_METADATA_KEY: Declaration(doc, kind, check, lone_string, derived,
                                                                  needs_cmake)})


@dataclass(frozen=True)
class KeyDoc:
    """One declared key, as the reference shows it."""

    key: str
    kind: str
    default: Any
    doc: str
    required: bool
    derived: bool
    table: type | None  # the sub-table's dataclass, for a table or a list of tables
    needs_cmake: bool = False


def is_declared(field: dataclasses.Field[Any]) -> bool:
    return _METADATA_KEY in field.metadata


@cache
def declared_keys(cls: type) -> dict[str, tuple[dataclasses.Field[Any], Any]]:
    """TOML key -> (field, resolved annotation), in declaration order."""
    hints = typing.get_type_hints(cls)
    return {f.name.replace("_", "-"): (f, hints[f.name]) for f in dataclasses.fields(cls) if is_declared(f)}


def describe(cls: type) -> tuple[KeyDoc, ...]:
    """The reference rows of ``cls``'s keys, in declaration order."""
    rows = []
    for key, (field, hint) in declared_keys(cls).items():
        declaration: Declaration = field.metadata[_METADATA_KEY]
        rows.append(KeyDoc(key, declaration.kind or kind_of(hint), _default(field), declaration.doc,
                           _required(field), declaration.derived, _table_class(hint), declaration.needs_cmake))
    return tuple(rows)


def keys_needing_cmake(cls: type, raw: Mapping[str, Any], location: Location) -> list[str]:
    """The keys written in ``raw`` (a table already read by :func:`read_table`), and in its
    sub-tables, whose declaration says only a CMake build reads them, shown with their path
    (``[tool.buildkit] scripts[0].when``)."""
    found = []
    for key, value in raw.items():
        if key not in declared_keys(cls):
            continue  # another reader's key (a build option)
        field, hint = declared_keys(cls)[key]
        if field.metadata[_METADATA_KEY].needs_cmake:
            found.append(show((*location, key)))
            continue
        table = _table_class(hint)
        if table is None:
            continue
        entries = value if isinstance(value, list) else [value]
        for index, entry in enumerate(entries):
            where = (*location, key, index) if isinstance(value, list) else (*location, key)
            found += keys_needing_cmake(table, entry, where)
    return found


def read_table(cls: type, raw: Mapping[str, Any], location: Location,
               also_known: Collection[str] = ()) -> dict[str, Any]:
    """Keyword arguments for ``cls`` from the TOML table ``raw``.

    Keys in ``also_known`` belong to another reader: they are skipped here but
    offered as suggestions for a misspelt key.
    """
    declared = declared_keys(cls)
    known = sorted([*declared, *also_known])
    for key in raw:
        if key not in declared and key not in also_known:
            close = difflib.get_close_matches(key, known, n=1)
            suggestion = f"; did you mean `{close[0]}`?" if close else "."
            raise ConfigError(f"Unknown key `{key}` in {show(location)}{suggestion}",
                              f"The keys of {show(location)} are: {', '.join(known)}.")
    values = {declared[key][0].name: _read_key(*declared[key], value, (*location, key))
              for key, value in raw.items() if key in declared}
    for key, (field, _) in declared.items():
        if _required(field) and key not in raw:
            raise ConfigError(f"{show(location)} lacks the required key `{key}`: {dict(raw)!r}.",
                              f"Write it as {table_form(cls)}.")
    return values


def show(location: Location) -> str:
    """``[tool.buildkit] scripts[0].target``."""
    title, *path = location
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return f"{title} {text}" if text else str(title)


def table_form(cls: type) -> str:
    """``a table with `name` and `target`, and optionally `when```."""
    keys = declared_keys(cls)
    required = [f"`{k}`" for k, (f, _) in keys.items() if _required(f)]
    optional = [f"`{k}`" for k, (f, _) in keys.items() if not _required(f)]
    if not required:
        return "a table with any of " + _join(optional, "and")
    text = "a table with " + _join(required, "and")
    if optional:
        text += (", and optionally " if len(required) > 1 else " and optionally ") + _join(optional, "or")
    return text


def kind_of(hint: Any) -> str:
    return _noun(hint, plural=False)


def with_article(kind: str) -> str:
    if kind.startswith("one of"):
        return kind
    return ("an " if kind[0] in "aeiou" else "a ") + kind


# ------------------------------------------------------------------ internals

class _Mismatch(Exception):
    """The value is not of the declared type; reported by the key that holds it."""


def _read_key(field: dataclasses.Field[Any], hint: Any, value: Any, location: Location) -> Any:
    declaration: Declaration = field.metadata[_METADATA_KEY]
    mismatch = ConfigError(f"{show(location)} must be {with_article(declaration.kind or kind_of(hint))}, "
                           f"not {value!r}.", declaration.doc)
    try:
        converted = _convert(hint, value, location, declaration.lone_string)
    except _Mismatch:
        raise mismatch from None
    if declaration.check is not None:
        try:
            accepted = declaration.check(converted)
        except ConfigError as error:
            raise ConfigError(f"{show(location)}: {error.message}", error.hint) from None
        if accepted is False:
            raise mismatch
    return converted


def _convert(hint: Any, value: Any, location: Location, lone_string: bool = False) -> Any:
    hint = _without_none(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        for choice in args:
            try:
                return _convert(choice, value, location)
            except _Mismatch:
                continue
        raise _Mismatch
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):  # an annotation: a class, never an instance
        if not isinstance(value, dict):
            raise _Mismatch
        return hint(**read_table(hint, value, location))
    if origin in (tuple, frozenset):
        items = [value] if lone_string and isinstance(value, str) else value
        if not isinstance(items, list):
            raise _Mismatch
        return origin(_element(args[0], item, (*location, i)) for i, item in enumerate(items))
    if origin is dict:
        if not isinstance(value, dict):
            raise _Mismatch
        return {name: _element(args[1], item, (*location, name)) for name, item in value.items()}
    if isinstance(value, str):
        check_text(value, show(location))
    return _scalar(hint, value)


def _element(hint: Any, item: Any, location: Location) -> Any:
    """One item of an array or table: a sub-table is reported where it sits, a scalar
    by the key that holds the whole array (``dependencies must be a list of strings``)."""
    table = _table_class(hint)
    if table is not None and not isinstance(item, dict):
        raise ConfigError(f"{show(location)} must be a table, not {item!r}.", f"Write it as {table_form(table)}.")
    return _convert(hint, item, location)


# The TOML values each scalar annotation accepts.
_SCALARS: dict[Any, Callable[[Any], bool]] = {
    str: lambda v: isinstance(v, str),
    bool: lambda v: isinstance(v, bool),
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),  # TOML's true is no number
    Path: lambda v: isinstance(v, str),
}


def _scalar(hint: Any, value: Any) -> Any:
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if isinstance(value, str) and value in {member.value for member in hint}:
            return hint(value)
        raise _Mismatch
    if hint not in _SCALARS:
        raise TypeError(f"settings cannot declare a field of type {hint!r}")
    if not _SCALARS[hint](value):
        raise _Mismatch
    return Path(value) if hint is Path else value


def _noun(hint: Any, plural: bool) -> str:
    hint = _without_none(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return _join([_noun(choice, plural) for choice in args], "or")
    if dataclasses.is_dataclass(hint):
        return "tables" if plural else "table"
    if origin in (tuple, frozenset):
        return ("lists of " if plural else "list of ") + _noun(args[0], plural=True)
    if origin is dict:
        return ("tables of " if plural else "table of ") + _noun(args[1], plural=True)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = _join([f"`{member.value}`" for member in hint], "or")
        return f"strings out of {values}" if plural else f"one of {values}"
    names = {str: "string", bool: "boolean", int: "integer", Path: "path"}
    return names.get(hint, getattr(hint, "__name__", str(hint))) + ("s" if plural else "")


def _table_class(hint: Any) -> type | None:
    """The sub-table dataclass of a table or list-of-tables annotation."""
    hint = _without_none(hint)
    if typing.get_origin(hint) in (tuple, frozenset):
        hint = _without_none(typing.get_args(hint)[0])
    return hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (Union, types.UnionType):
        choices = [a for a in typing.get_args(hint) if a is not type(None)]
        return choices[0] if len(choices) == 1 else Union[tuple(choices)]  # noqa: UP007  a union of a run-time tuple has no X | Y spelling
    return hint


def _required(field: dataclasses.Field[Any]) -> bool:
    return field.default is MISSING and field.default_factory is MISSING


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not MISSING:
        return field.default_factory()
    return None if field.default is MISSING else field.default


def _join(words: list[str], last: str) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"
