"""functorch-style helpers (built when BUILD_FUNCTIONAL=ON): vmap() and grad()."""

from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import tensorlet

try:
    from . import _functional_C
except ImportError as e:  # pragma: no cover - only in a build without BUILD_FUNCTIONAL
    raise ImportError("tensorlet.functional needs the _functional_C extension; rebuild tensorlet with "
                      "BUILD_FUNCTIONAL=ON") from e

__all__ = ["vmap", "grad", "grad_and_value"]


def vmap(func: Callable, in_dims: Union[int, None, Sequence[Union[int, None]]] = 0) -> Callable:
    """vmap(f)(xs) == stack([f(x) for x in xs]) along in_dims (None = broadcast the argument)."""

    def batched(*args: Any):
        dims = tuple(in_dims) if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        sizes = {a.shape[d] for a, d in zip(args, dims) if d is not None}
        if len(sizes) != 1:
            raise ValueError(f"vmap: expected one batch size along in_dims, got {sorted(sizes)}")
        return _functional_C._vmap_call(func, tuple(args), dims, sizes.pop())

    return batched


def grad_and_value(func: Callable, argnums: int = 0) -> Callable:
    def wrapper(*args: Any):
        args = list(args)
        x = args[argnums].detach().clone().requires_grad_(True)
        args[argnums] = x
        with tensorlet.enable_grad():
            value = func(*args)
            value.backward()
        return x.grad, value.detach()

    return wrapper


def grad(func: Callable, argnums: int = 0) -> Callable:
    """grad(f)(x) is df/dx for a scalar-valued f."""
    gv = grad_and_value(func, argnums)
    return lambda *args: gv(*args)[0]
