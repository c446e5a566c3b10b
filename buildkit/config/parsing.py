"""Strict parsers for the values buildkit reads from the environment.

Each takes the raw text and the variable's name, and raises a ConfigError that
names the variable, the value and what would be accepted.
"""

from __future__ import annotations

import enum
import shlex
from typing import TypeVar

from buildkit._util.switches import FALSE_WORDS, TRUE_WORDS, switch_word
from buildkit.config.modes import CudaToolkit, Distribution
from buildkit.errors import ConfigError

BUILD_TYPES = ("Debug", "Release", "RelWithDebInfo", "MinSizeRel")


# buildkit hands each value to CMake as one command-line argument (-DNAME=VALUE), and
# Linux limits one argument to 128 KiB (MAX_ARG_STRLEN): a longer one fails the start
# of cmake itself, which would read as a missing tool.
MAX_VALUE_BYTES = 64 * 1024


def check_text(value: str, where: str, *, one_line: bool = True) -> str:
    """``value`` when buildkit can pass it on; else one ConfigError naming ``where``: a NUL
    (no command line can hold one), a line break where the value becomes a CMake cache
    entry (CMake keeps the first line and drops the rest without an error), or a value
    longer than MAX_VALUE_BYTES."""
    shown = value if len(value) <= 60 else value[:57] + "..."
    if "\0" in value:
        raise ConfigError(f"{where} contains a NUL character: {shown!r}.",
                          "Remove it; no command line can pass a NUL to CMake or the compiler.")
    if one_line and ("\n" in value or "\r" in value):
        raise ConfigError(f"{where} contains a line break: {shown!r}.",
                          "Write it on one line: CMake keeps only the first line of a cache value and drops "
                          "the rest. For a list, separate the items with ';'.")
    size = len(value.encode("utf-8", errors="surrogateescape"))
    if size > MAX_VALUE_BYTES:
        raise ConfigError(f"{where} is {size:,} bytes long: {shown!r}.",
                          f"buildkit passes it to CMake as one command-line argument; keep it under "
                          f"{MAX_VALUE_BYTES // 1024} KiB (Linux refuses arguments over 128 KiB). Put long lists "
                          "in a file that CMakeLists.txt reads (file(STRINGS ...)) and pass its path.")
    return value


def parse_bool(value: str, name: str) -> bool:
    """The one strict boolean parser: unknown words are errors, never False."""
    verdict = switch_word(value)
    if verdict is not None:
        return verdict
    raise ConfigError(
        f"{name}={value!r} is not a boolean.",
        f"Use one of {', '.join(w for w in TRUE_WORDS)} to turn it on, or "
        f"{', '.join(w if w else repr(w) for w in FALSE_WORDS)} to turn it off.")


def parse_positive_int(value: str, name: str) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        number = 0
    if number <= 0 or number > 4096:
        raise ConfigError(f"{name}={value!r} is not a usable job count.",
                          f"Set {name} to a whole number between 1 and 4096, or unset it to let buildkit choose.")
    return number


def parse_build_type(value: str, name: str) -> str:
    for build_type in BUILD_TYPES:
        if value.strip().lower() == build_type.lower():
            return build_type
    raise ConfigError(f"{name}={value!r} is not a CMake build type.",
                      f"Use one of {', '.join(BUILD_TYPES)}.")


def parse_build_type_list(values: list[object], name: str) -> tuple[str, ...]:
    """``build-type = ["Release", "Debug"]``: each element as :func:`parse_build_type` reads
    one, at least one, none twice (``release`` and ``Release`` are the same type)."""
    if not values:
        raise ConfigError(f"{name} is an empty list, so no build type would be built.",
                          "Name one build type (`build-type = \"Release\"`) or several, the first "
                          "the primary (`[\"Release\", \"Debug\"]`).")
    found: list[str] = []
    for index, value in enumerate(values):
        where = f"{name}[{index}]"
        if not isinstance(value, str):
            raise ConfigError(f"{where} must be a build type, not {value!r}.", f"Use one of {', '.join(BUILD_TYPES)}.")
        build_type = parse_build_type(value, where)
        if build_type in found:
            raise ConfigError(f"{name} names the build type {build_type} twice ({where} is {value!r}).",
                              "Name each build type once: each is built once, into its own build folder.")
        found.append(build_type)
    return tuple(found)


def parse_generator(value: str, name: str) -> str:
    if not value.strip():
        raise ConfigError(f"{name} is set but empty.", f"Unset {name} or name a generator such as Ninja.")
    return value.strip()


_Enum = TypeVar("_Enum", bound=enum.Enum)


def _member(kind: type[_Enum], value: str) -> _Enum | None:
    """The member of ``kind`` whose value is the word ``value``, in any case; None for another word."""
    word = value.strip().lower()
    return next((member for member in kind if member.value == word), None)


def parse_cuda_toolkit(value: str, name: str) -> CudaToolkit:
    if (toolkit := _member(CudaToolkit, value)) is not None:
        return toolkit
    raise ConfigError(f"{name}={value!r} is not a CUDA toolkit source.",
                      "Use `wheel` (nvcc, headers and libraries from NVIDIA's wheels in the build environment), "
                      "`system` (the CUDA installation on this machine) or `auto` (the system's when it has the "
                      "CUDA major version asked for, else the wheels').")


def parse_distribution(value: str, name: str) -> Distribution:
    if (distribution := _member(Distribution, value)) is not None:
        return distribution
    raise ConfigError(f"{name}={value!r} is not a way to distribute compiles.",
                      "Use `sccache` (compiles through sccache on the sccache-dist cluster its client "
                      "configuration names; docs/distributed.md) or `none` (every compile on this machine).")


def parse_args(value: str, name: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(value))
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} cannot be split into arguments ({exc}).",
                          "Balance the quotes: it is split like a POSIX shell command line.") from exc


def parse_text(value: str, name: str) -> str:
    return value


def parse_nonempty(value: str, name: str) -> str:
    if not value.strip():
        raise ConfigError(f"{name} is set but empty.", f"Unset {name} or give it a value.")
    return value.strip()


def parse_requirements(value: str, name: str) -> tuple[str, ...]:
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: ~20 ms to import

    items = tuple(item.strip() for item in value.split("|") if item.strip())
    for item in items:
        try:
            Requirement(item)
        except InvalidRequirement as exc:
            raise ConfigError(f"{name} holds {item!r}, which is not a valid requirement ({exc}).",
                              f"Separate requirements with `|`, e.g. {name}='numpy>=1.24 | pyyaml'.") from exc
    return items


def parse_epoch(value: str, name: str) -> int:
    try:
        epoch = int(value.strip())
    except ValueError:
        epoch = -1
    if epoch < 315532800:  # zip timestamps start in 1980
        raise ConfigError(f"{name}={value!r} is not a usable timestamp.",
                          f"Set {name} to seconds since 1970 at or after 1980-01-01 (315532800), "
                          "for example `git log -1 --format=%ct`.")
    return epoch
