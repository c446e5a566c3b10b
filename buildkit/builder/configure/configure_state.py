"""What a configure depends on, and what a change of it means.

:class:`buildkit.builder.driver.CMakeDriver` records its configure inputs as label -> value
pairs (``.buildkit/configure.json``); :func:`diff_inputs` names every change, and
:func:`needs_fresh` tells the changes CMake only honours in a new cache (the
generator, a toolchain file, the compiler of a language the cache already enabled)
from those a plain reconfigure picks up.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from buildkit.builder.configure.cmake_cache import CMakeCache, is_cmake_notfound

FINGERPRINT_FORMAT = 1
TOOL_LABELS = {"cmake": "cmake", "ninja": "ninja", "c": "C compiler", "cxx": "C++ compiler", "nvcc": "nvcc"}
CACHE_COMPILERS = {"c": "CMAKE_C_COMPILER", "cxx": "CMAKE_CXX_COMPILER", "nvcc": "CMAKE_CUDA_COMPILER"}
# Inputs CMake only reads when it creates a cache: a change needs a fresh configure.
FRESH_INPUTS = frozenset({
    "generator", "source folder",
    "environment CMAKE_TOOLCHAIN_FILE", "environment CMAKE_GENERATOR_PLATFORM",
    "environment CMAKE_GENERATOR_TOOLSET", "environment CMAKE_GENERATOR_INSTANCE",
})
# Inputs that choose a language's compiler, by the cache entry that records the choice.
# CMake reads them once, when the language is enabled: a change needs a fresh configure
# only if the cache already holds a compiler for that language. Setting CUDACXX for a
# folder that never enabled CUDA must not throw away every object file.
COMPILER_INPUTS = {
    "C compiler": "CMAKE_C_COMPILER", "-DCMAKE_C_COMPILER": "CMAKE_C_COMPILER", "environment CC": "CMAKE_C_COMPILER",
    "C++ compiler": "CMAKE_CXX_COMPILER", "-DCMAKE_CXX_COMPILER": "CMAKE_CXX_COMPILER",
    "environment CXX": "CMAKE_CXX_COMPILER",
    "nvcc": "CMAKE_CUDA_COMPILER", "-DCMAKE_CUDA_COMPILER": "CMAKE_CUDA_COMPILER",
    "environment CUDACXX": "CMAKE_CUDA_COMPILER",
    # A buildkit.torch project's CUDA_HOME and CC (builder/configure/torch_project.py).
    "-DCMAKE_CUDA_COMPILER (set by buildkit)": "CMAKE_CUDA_COMPILER",
    "-DCMAKE_CUDA_HOST_COMPILER (set by buildkit)": "CMAKE_CUDA_COMPILER",
}
_PLAIN_LABELS = frozenset({*TOOL_LABELS.values(), "Python"})  # shown without quotes


@dataclass(frozen=True)
class Decision:
    needed: bool
    reasons: list[str] = field(default_factory=list)
    fresh: bool = False  # delete CMakeCache.txt and CMakeFiles/ first
    forget_python: bool = False  # drop the cached Python entries with -U


def python_identity() -> str:
    """The interpreter as CMake sees it: its environment and version, not the spelling of
    its path (``python`` and ``python3`` in one venv are the same interpreter)."""
    return f"{sys.prefix} ({sys.implementation.name} {'.'.join(map(str, sys.version_info[:3]))})"


def diff_inputs(old: Mapping[str, str], new: Mapping[str, str]) -> list[tuple[str, str]]:
    """(label, reason) for every configure input that differs."""
    changes = []
    for label in [*new, *(label for label in old if label not in new)]:
        before, after = old.get(label), new.get(label)
        if before == after:
            continue
        if after is None and label.startswith("-D"):
            text = f"{label} is no longer set (CMakeCache.txt keeps {before!r})"
        else:
            text = f"{label} changed: {_show(label, before)} → {_show(label, after)}"
        changes.append((label, text))
    return changes


def needs_fresh(label: str, cache: CMakeCache) -> bool:
    """Whether a change of ``label`` needs CMakeCache.txt and CMakeFiles/ deleted first."""
    if label in FRESH_INPUTS:
        return True
    compiler = COMPILER_INPUTS.get(label)
    recorded = cache.get_value(compiler) if compiler else None
    return bool(recorded and not is_cmake_notfound(recorded))


def _show(label: str, value: str | None) -> str:
    if value is None:
        return "unset"
    return value if label in _PLAIN_LABELS else repr(value)
