"""Checks analytical gradients (the backward formulas) against central finite
differences, computed in float64."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn: Callable, inputs: tuple) -> list:
    return [o for o in _as_tuple(fn(*inputs)) if isinstance(o, _C._TensorBase)]


def gradcheck(fn: Callable, inputs: Any, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """True when d fn / d inputs from autograd matches finite differences.

    Inputs that require grad should be float64 (a warning-free float32 check would
    need a far larger eps); other inputs are passed through unchanged."""
    inputs = _as_tuple(inputs)
    diff_inputs = [i for i, x in enumerate(inputs) if isinstance(x, _C._TensorBase) and x.requires_grad]
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor with requires_grad=True")
    for i in diff_inputs:
        if inputs[i].dtype != _C.float64:
            raise ValueError(f"gradcheck: input {i} is {inputs[i].dtype}; use float64 inputs")

    outputs = _outputs(fn, inputs)
    out_sizes = [o.numel() for o in outputs]
    total_out = sum(out_sizes)

    # Analytical Jacobian, one row per output element (vector-Jacobian products).
    analytical = {i: np.zeros((inputs[i].numel(), total_out)) for i in diff_inputs}
    row = 0
    for k, out in enumerate(outputs):
        for j in range(out_sizes[k]):
            for i in diff_inputs:
                inputs[i].grad = None
            outs = _outputs(fn, inputs)
            if not outs[k].requires_grad:
                row += 1
                continue
            seed = np.zeros(out_sizes[k])
            seed[j] = 1.0
            grad_out = _C._from_numpy(seed.reshape(tuple(outs[k].shape))).to(dtype=outs[k].dtype)
            outs[k].backward(grad_out)
            for i in diff_inputs:
                g = inputs[i].grad
                if g is not None:
                    analytical[i][:, row] = g.detach().numpy().reshape(-1)
            row += 1

    # Numerical Jacobian by central differences, perturbing the input memory directly.
    numerical = {i: np.zeros_like(analytical[i]) for i in diff_inputs}
    with no_grad():
        for i in diff_inputs:
            flat = inputs[i].detach().numpy().reshape(-1) if inputs[i].is_contiguous() else None
            if flat is None:
                raise ValueError(f"gradcheck: input {i} must be contiguous")
            for e in range(flat.size):
                orig = flat[e]
                flat[e] = orig + eps
                plus = np.concatenate([o.double().numpy().reshape(-1) for o in _outputs(fn, inputs)] or [np.zeros(0)])
                flat[e] = orig - eps
                minus = np.concatenate([o.double().numpy().reshape(-1) for o in _outputs(fn, inputs)] or [np.zeros(0)])
                flat[e] = orig
                numerical[i][e, :] = (plus - minus) / (2 * eps)

    for i in diff_inputs:
        a, n = analytical[i], numerical[i]
        if not np.allclose(a, n, atol=atol, rtol=rtol):
            worst = np.unravel_index(np.argmax(np.abs(a - n)), a.shape)
            msg = (f"Jacobian mismatch for output {worst[1]} with respect to input {i},\n"
                   f"numerical:{n[worst]}\nanalytical:{a[worst]}\n"
                   f"max abs difference {np.max(np.abs(a - n)):.3e} (atol={atol}, rtol={rtol})")
            if raise_exception:
                raise GradcheckError(msg)
            return False
    return True
