"""Python-level functions around the generated bindings: tensor(), from_numpy(),
factories that take requires_grad=, manual_seed()."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import _C

FACTORIES = {"empty", "zeros", "ones", "full", "arange", "rand", "randn", "empty_like", "zeros_like", "ones_like"}

_NUMPY_DTYPES = {
    "bool": np.bool_, "uint8": np.uint8, "int32": np.int32, "int64": np.int64, "float32": np.float32,
    "float64": np.float64,
}


def numpy_dtype(dtype: _C.dtype) -> type:
    return _NUMPY_DTYPES[dtype._name]


def _with_requires_grad(fn):
    def factory(*args: Any, requires_grad: builtins.bool = False, **kwargs: Any):
        t = fn(*args, **kwargs)
        if requires_grad:
            t.requires_grad_(True)
        return t

    factory.__name__ = fn.__name__
    factory.__doc__ = fn.__doc__
    return factory


def public_function(name: str):
    fn = getattr(_C, name)
    return _with_requires_grad(fn) if name in FACTORIES else fn


def from_numpy(array: np.ndarray):
    """A tensor sharing memory with `array` (as torch.from_numpy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return _C._from_numpy(array)


def is_tensor(obj: Any) -> builtins.bool:
    return isinstance(obj, _C._TensorBase)


def _infer_dtype(data: Any, array: np.ndarray):
    if isinstance(data, np.ndarray):
        return None  # keep the array's dtype
    if array.dtype == np.float64:
        return _C.float32  # Python floats default to float32, as in torch
    if array.dtype.kind in "iu" and array.dtype != np.uint8:
        return _C.int64
    return None


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False):
    """A new tensor holding a copy of `data` (nested lists, numbers, numpy arrays or tensors)."""
    if is_tensor(data):
        out = data.detach().clone()
    else:
        if isinstance(data, (list, tuple)) and any(is_tensor(x) for x in data):
            data = [x.tolist() if is_tensor(x) else x for x in data]
        array = np.array(data)
        if array.dtype == object or array.dtype.kind not in "biuf":
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
        if array.dtype.kind in "iu" and array.dtype not in (np.uint8, np.int32, np.int64):
            array = array.astype(np.int64)
        inferred = _infer_dtype(data, array)
        out = _C._from_numpy(np.array(array, order="C", copy=True))
        if inferred is not None and dtype is None:
            dtype = inferred
    if dtype is not None or device is not None:
        out = out.to(dtype=dtype, device=None if device is None else str(device))
    if requires_grad:
        out.requires_grad_(True)
    return out


def manual_seed(seed: int) -> None:
    """Seeds the generator behind rand() and randn()."""
    _C._manual_seed(builtins.int(seed))
