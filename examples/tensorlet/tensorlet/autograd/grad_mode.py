from __future__ import annotations

import functools

from .. import _C


def is_grad_enabled() -> bool:
    return _C._is_grad_enabled()


class set_grad_enabled:
    """Context manager / function that turns gradient recording on or off (per thread)."""

    def __init__(self, mode: bool):
        self.prev = _C._is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _C._set_grad_enabled(self.prev)


class _GradModeContext:
    enabled: bool

    def __enter__(self) -> None:
        self.prev = _C._is_grad_enabled()
        _C._set_grad_enabled(self.enabled)

    def __exit__(self, *exc: object) -> None:
        _C._set_grad_enabled(self.prev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Disables gradient recording inside the block (or decorated function)."""
    enabled = False


class enable_grad(_GradModeContext):
    enabled = True
