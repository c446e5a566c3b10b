"""buildkit: PyTorch-style build orchestration for CMake C++/CUDA Python projects.

A consuming project's ``setup.py`` is ``from buildkit import setup; setup()``; its
configuration lives in ``[tool.buildkit]``.  The names below are imported when
first used: every command imports this package, and the no-op ``buildkit
develop`` must not pay for setuptools (~130 ms) or rich.  See docs/architecture.md
for the packages behind them.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured): the no-op develop goes without
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Project": ("buildkit.project", "Project"),
    "BuildOptions": ("buildkit.config.options", "BuildOptions"),
    "load_options": ("buildkit.config.options", "load_options"),
    "parse_bool": ("buildkit.config.options", "parse_bool"),
    "WheelMode": ("buildkit.config.modes", "WheelMode"),
    "CMakeCache": ("buildkit.builder.configure.cmake_cache", "CMakeCache"),
    "BuildkitError": ("buildkit.errors", "BuildkitError"),
}


def setup(**overrides: Any) -> Any:
    """Run buildkit's ten-step flow and ``setuptools.setup`` (see docs/flow.md)."""
    # Imported here, not at the top: a no-op `setup.py develop` is answered from the record of
    # the last one (buildkit.frontends.noop_develop) without reading the project, and the
    # flow's imports cost ~0.15 s more (setuptools another ~130 ms; measured with -X importtime).
    from buildkit.frontends import noop_develop

    if noop_develop.answer_setup_py(sys.argv):
        return None
    from buildkit.frontends.setuptools.flow import setup as _setup

    return _setup(**overrides)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'buildkit' has no attribute {name!r}")


__all__ = ["setup", "__version__", *_LAZY]  # noqa: PLE0604  _LAZY's keys are the lazy names, all strings
