"""Per-operator timing (needs a build with USE_TLPROF=ON).

    with tensorlet.profiler.profile() as prof:
        y = model(x)
    print(prof.table())"""

from __future__ import annotations

import ctypes
import json
from typing import Optional

from . import _libraries

_lib: Optional[ctypes.CDLL] = None


def is_available() -> bool:
    return (_libraries.lib_dir / "libtensorlet_profiler.so").exists()


def _library() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        path = _libraries.lib_dir / "libtensorlet_profiler.so"
        if not path.exists():
            raise RuntimeError("tensorlet was built without the profiler (rebuild with USE_TLPROF=ON)")
        _lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        _lib.tlprof_report_json.restype = ctypes.c_char_p
    return _lib


class profile:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def __enter__(self) -> "profile":
        lib = _library()
        lib.tlprof_reset()
        lib.tlprof_enable()
        return self

    def __exit__(self, *exc: object) -> None:
        lib = _library()
        lib.tlprof_disable()
        self.events = json.loads(lib.tlprof_report_json().decode())

    def key_averages(self) -> list[dict]:
        return self.events

    def table(self) -> str:
        rows = [f"{'op':<40} {'calls':>7} {'total us':>12}"]
        rows += [f"{e['name']:<40} {e['calls']:>7} {e['total_us']:>12.1f}" for e in self.events]
        return "\n".join(rows)
