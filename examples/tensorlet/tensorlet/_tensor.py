"""tensorlet.Tensor: the Python face of `_C._TensorBase` (operators, indexing,
conversions, repr). Generated methods (add, sum, view...) come from C++."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import _C
from ._device import device as _device
from ._indexing import getitem, setitem


class _GradFn:
    """A read-only stand-in for the autograd node that produced a tensor."""

    def __init__(self, name: str):
        self._name = name

    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{self._name}>"


def _binary(name: str, reverse: builtins.bool = False):
    fn = getattr(_C, name)
    if reverse:
        return lambda self, other: fn(other, self)
    return lambda self, other: fn(self, other)


class Tensor(_C._TensorBase):
    __hash__ = object.__hash__

    # ---- metadata -------------------------------------------------------------------
    @property
    def device(self) -> _device:
        return _device(self._device_str)

    @property
    def grad_fn(self):
        name = self._grad_fn_name
        return None if name is None else _GradFn(name)

    @property
    def is_cuda(self) -> builtins.bool:
        return self._device_str.startswith("cuda")

    @property
    def is_meta(self) -> builtins.bool:
        return self._device_str == "meta"

    @property
    def T(self) -> "Tensor":
        return self.permute(*reversed(range(self.dim())))

    def is_floating_point(self) -> builtins.bool:
        return self.dtype.is_floating_point

    # ---- conversions ----------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> "Tensor":
        """to(dtype) / to(device) / to(device, dtype) / to(other_tensor), plus keyword forms."""
        dtype, dev = kwargs.pop("dtype", None), kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, dev = a.dtype, a.device
            elif isinstance(a, (str, _device)):
                dev = a
            else:
                raise TypeError(f"to() received an invalid argument {a!r}")
        return super().to(dtype=dtype, device=None if dev is None else str(dev), copy=copy)

    def cpu(self) -> "Tensor":
        return self.to("cpu")

    def cuda(self, device: Any = None) -> "Tensor":
        return self.to("cuda" if device is None else _device(device) if not isinstance(device, int) else f"cuda:{device}")

    def float(self) -> "Tensor":  # noqa: A003
        return self.to(_C.float32)

    def double(self) -> "Tensor":
        return self.to(_C.float64)

    def long(self) -> "Tensor":
        return self.to(_C.int64)

    def int(self) -> "Tensor":  # noqa: A003
        return self.to(_C.int32)

    def bool(self) -> "Tensor":  # noqa: A003
        return self.to(_C.bool)

    def type_as(self, other: "Tensor") -> "Tensor":
        return self.to(other.dtype)

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device_str != "cpu":
            raise TypeError(f"can't convert {self._device_str} device type tensor to numpy. Use Tensor.cpu() to copy "
                            "the tensor to host memory first.")
        return np.asarray(self)

    def tolist(self) -> Any:
        return self.detach().cpu().numpy().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    # ---- autograd -----------------------------------------------------------------------
    def backward(self, gradient: "Tensor | None" = None, retain_graph: builtins.bool = False) -> None:
        _C._backward((self,), (gradient,), builtins.bool(retain_graph))

    # ---- Python protocol --------------------------------------------------------------
    def __repr__(self) -> str:
        from ._printing import tensor_repr
        return tensor_repr(self)

    def __len__(self) -> builtins.int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> builtins.bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self.item())

    def __float__(self) -> builtins.float:
        return builtins.float(self.item())

    def __int__(self) -> builtins.int:
        return builtins.int(self.item())

    def __index__(self) -> builtins.int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    __getitem__ = getitem
    __setitem__ = setitem

    # + - * / (and their reflected forms) are _C._TensorBase's number slots: a fast
    # path for two tensors, the generated _C.add/sub/mul/div for anything else.
    __matmul__ = _binary("matmul")
    __rmatmul__ = _binary("matmul", reverse=True)
    __eq__ = _binary("eq")  # type: ignore[assignment]
    __lt__ = _binary("lt")
    __gt__ = _binary("gt")

    def __ne__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return _C.eq(_C.eq(self, other), False)

    def __le__(self, other: Any) -> "Tensor":
        return _C.eq(_C.gt(self, other), False)

    def __ge__(self, other: Any) -> "Tensor":
        return _C.eq(_C.lt(self, other), False)

    def __neg__(self) -> "Tensor":
        return _C.neg(self)

    def __pos__(self) -> "Tensor":
        return self

    def __abs__(self) -> "Tensor":
        return _C.abs(self)

    def __iadd__(self, other: Any) -> "Tensor":
        return self.add_(other)

    def __imul__(self, other: Any) -> "Tensor":
        return self.mul_(other)

    def __isub__(self, other: Any) -> "Tensor":
        return self.sub_(other)

    def __itruediv__(self, other: Any) -> "Tensor":
        return self.div_(other)


_C._set_tensor_class(Tensor)
