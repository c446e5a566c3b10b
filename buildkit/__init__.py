"""buildkit: PyTorch-style build orchestration for CMake C++/CUDA Python projects.

A consuming project's ``setup.py`` is ``from buildkit import setup; setup()``; its
configuration lives in ``[tool.buildkit]``.  Imports are lazy so that the CLI's
no-op paths stay fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Project": ("buildkit.project", "Project"),
    "BuildOptions": ("buildkit.options", "BuildOptions"),
    "load_options": ("buildkit.options", "load_options"),
    "parse_bool": ("buildkit.options", "parse_bool"),
    "WheelMode": ("buildkit.layout", "WheelMode"),
    "CMakeCache": ("buildkit.cmake_cache", "CMakeCache"),
    "BuildkitError": ("buildkit.errors", "BuildkitError"),
}


def setup(**overrides: Any):
    """Run buildkit's ten-step flow and ``setuptools.setup`` (see docs/flow.md)."""
    from .project import setup as _setup

    return _setup(**overrides)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'buildkit' has no attribute {name!r}")


__all__ = ["setup", "__version__", *_LAZY]
