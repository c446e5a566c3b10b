"""Generic access to operators by name, including ops that C++ extensions add.

    tensorlet.ops.load_library("libmy_ops.so")   # runs its TENSORLET_LIBRARY blocks
    tensorlet.ops.call("myops::scale", x, 2.0)"""

from __future__ import annotations

import ctypes
from typing import Any

from . import _C

_loaded: list = []


def load_library(path: str) -> None:
    """Loads a shared library whose static registrars add ops or kernels."""
    _loaded.append(ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL))


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Calls operator `name` ("ns::op.overload"; the namespace defaults to tensorlet) through the dispatcher."""
    return _C._call_op(name, *args, **kwargs)


def names() -> list:
    return _C._op_names()


def schema(name: str) -> str:
    return _C._schema(name)


def dispatch_table(name: str) -> dict:
    """{"registered": {key: kernel}, "table": {runtime key: kernel}} for operator `name`."""
    return _C._dispatch_table(name)


def set_tracing(enabled: bool) -> None:
    _C._set_tracing(bool(enabled))


def tracing_log() -> list:
    return _C._tracing_log()
