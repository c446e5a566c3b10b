"""Basic indexing: integers, slices, None and Ellipsis, via select / slice /
unsqueeze views (advanced indexing with tensors is not supported)."""

from __future__ import annotations

from typing import Any

from . import _C


def _normalize(t: Any, key: Any) -> list:
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis)
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (t.dim() - consumed)
    return items


def getitem(self, key: Any):
    out, dim = self, 0
    for k in _normalize(self, key):
        if k is None:
            out = _C.unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            out = _C.slice(out, dim, k.start, k.stop, 1 if k.step is None else k.step)
            dim += 1
        elif isinstance(k, bool) or (isinstance(k, _C._TensorBase) and k.dim() > 0):
            raise IndexError("tensorlet supports basic indexing only (integers, slices, None, ...)")
        elif hasattr(k, "__index__"):
            out = _C.select(out, dim, k.__index__())
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`) and None are valid indices "
                             f"(got {type(k).__name__})")
    if out is self:
        out = _C.slice(self, 0, None, None, 1) if self.dim() > 0 else self.view(())
    return out


def setitem(self, key: Any, value: Any) -> None:
    target = getitem(self, key)
    if isinstance(value, _C._TensorBase):
        target.copy_(value)
    else:
        target.fill_(value)
