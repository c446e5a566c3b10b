from __future__ import annotations

import numpy as np

_DEFAULT_DTYPES = ("float32", "int64", "bool")


def tensor_repr(t) -> str:
    suffix = []
    if t.is_meta:
        body = "..."
        suffix.append(f"size={tuple(t.shape)}")
    else:
        a = t.detach().cpu().numpy()
        body = np.array2string(a, separator=", ", prefix="tensor(", precision=4,
                               floatmode="maxprec_equal" if a.dtype.kind == "f" else "maxprec")
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if t.dtype._name not in _DEFAULT_DTYPES or (t.numel() == 0 and t.dtype._name != "float32"):
        suffix.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"
