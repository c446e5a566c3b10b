"""Autograd entry points: backward(), no_grad(), gradcheck()."""

from __future__ import annotations

from typing import Any

from .. import _C
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck

__all__ = ["backward", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "gradcheck",
           "GradcheckError"]


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool = False) -> None:
    if isinstance(tensors, _C._TensorBase):
        tensors = (tensors,)
    if grad_tensors is None or isinstance(grad_tensors, _C._TensorBase):
        grad_tensors = (grad_tensors,) * len(tensors)
    _C._backward(tuple(tensors), tuple(grad_tensors), bool(retain_graph))
