"""Every op of opinfo.OPS on every backend (cpu, cuda) and every dtype, against the
one reference (NumPy), over the same samples: 0-dim, empty, broadcast,
non-contiguous and larger inputs, the method and out= variants, and gradients
where the op has them (against central differences of the NumPy reference).

A dtype or variant a backend does not support must be refused with the error the
table states, so the table cannot claim less than a backend does, nor more.
Without a CUDA device the cuda rows are skipped, with the reason. conftest.py
prints the coverage table (op x backend x dtype) at the end of the run."""

from __future__ import annotations

import re

import numpy as np
import pytest
from opinfo import ALL, BACKENDS, NO_CUDA_KERNEL, OPS, OpInfo, Sample, result_dtype, samples

from conftest import requires_build, tl

pytestmark = requires_build

TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}
REDUCTION_TOL = {"float32": dict(rtol=1e-4, atol=1e-4), "float64": dict(rtol=1e-9, atol=1e-9)}
GRAD_TOL = {"float32": dict(rtol=1e-3, atol=1e-3), "float64": dict(rtol=1e-6, atol=1e-6)}
# Central differences cost two reference calls per input element: the small samples only.
GRAD_MAX_ELEMENTS = 64


def unavailable(backend: str) -> str | None:
    """Why a backend cannot run here, or None."""
    if tl is None or backend == "cpu":
        return None
    if not tl.cuda.is_built():
        return tl._libraries.cuda_error or "tensorlet was built without CUDA (USE_CUDA=OFF)"
    if not tl.cuda.is_available():
        return "no CUDA device (cudaGetDeviceCount reports none)"
    return None


def on(backend: str, array: np.ndarray):
    t = tl.from_numpy(array.copy())
    return t if backend == "cpu" else t.to(device=backend)


def host(t) -> np.ndarray:
    return t.cpu().numpy()


def noncontiguous(t):
    """The same values in a transposed, non-contiguous layout."""
    if t.dim() < 2:
        return t
    return t.transpose(0, 1).contiguous().transpose(0, 1)


def check_close(actual, expected: np.ndarray, dtype: str, tol) -> None:
    a = host(actual)
    assert a.dtype == np.dtype(dtype), (a.dtype, dtype)
    assert a.shape == np.shape(expected), (a.shape, np.shape(expected))
    if dtype in tol:
        np.testing.assert_allclose(a, np.asarray(expected).astype(dtype), equal_nan=True, **tol[dtype])
    else:
        np.testing.assert_array_equal(a, np.asarray(expected).astype(dtype))


def call(op: OpInfo, tensors: list, s: Sample, method: bool = False, **kwargs):
    if method:
        return getattr(tensors[0], op.name)(*tensors[1:], *s.args, **kwargs)
    return getattr(tl, op.name)(*tensors, *s.args, **kwargs)


def reference(op: OpInfo, s: Sample, out_dtype: str) -> np.ndarray:
    # Float results are computed in float64 from the same values, then compared at out_dtype.
    inputs = [a.astype(np.float64) for a in s.arrays] if out_dtype in ("float32", "float64") else s.arrays
    with np.errstate(all="ignore"):
        return np.asarray(op.ref(*inputs, **s.ref_kwargs))


def expected_dtype(op: OpInfo, s: Sample, dtype: str) -> str:
    if op.name == "argmax":
        return "int64"
    if op.name == "sum" and dtype not in ("float32", "float64"):
        return "int64"
    if op.kind == "elementwise":
        return result_dtype(op, [str(a.dtype) for a in s.arrays], [a.ndim for a in s.arrays])
    return dtype


def refuses(fn, pattern: str) -> None:
    # torch raises RuntimeError for a dtype it refuses; the dispatcher's NotImplementedError
    # (no kernel for a backend) is one too.
    with pytest.raises(RuntimeError) as info:
        fn()
    assert re.search(pattern, str(info.value)), f"{type(info.value).__name__}: {info.value}"


def numeric_grad(op: OpInfo, s: Sample, i: int, g: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d sum(ref(inputs) * g) / d inputs[i], by central differences in float64."""
    base = [a.astype(np.float64) for a in s.arrays]
    grad = np.zeros_like(base[i])
    for idx in np.ndindex(base[i].shape):
        orig = base[i][idx]
        base[i][idx] = orig + h
        up = np.sum(np.asarray(op.ref(*base, **s.ref_kwargs)) * g)
        base[i][idx] = orig - h
        down = np.sum(np.asarray(op.ref(*base, **s.ref_kwargs)) * g)
        base[i][idx] = orig
        grad[idx] = (up - down) / (2 * h)
    return grad


def check_grad(op: OpInfo, s: Sample, dtype: str, backend: str, rng: np.random.Generator) -> None:
    leaves = [on(backend, a).requires_grad_(True) for a in s.arrays]
    out = call(op, leaves, s)
    g = rng.uniform(-1, 1, tuple(out.shape))
    (out * on(backend, g.astype(dtype))).sum().backward()
    for i, leaf in enumerate(leaves):
        want = numeric_grad(op, s, i, g)
        got = host(leaf.grad) if leaf.grad is not None else np.zeros_like(want)
        assert got.shape == want.shape, (i, got.shape, want.shape)
        np.testing.assert_allclose(got, want, err_msg=f"gradient of input {i}", **GRAD_TOL[dtype])


def check_supported(op: OpInfo, backend: str, dtype: str) -> None:
    rng = np.random.default_rng(0)
    tol = TOL if op.kind == "elementwise" else REDUCTION_TOL
    for s in samples(op, dtype, rng):
        out_dtype = expected_dtype(op, s, dtype)
        ref = reference(op, s, out_dtype)
        if op.kind in ("matmul", "bmm") and dtype == "float32":
            k = s.arrays[0].shape[-1]
            tol = {"float32": dict(rtol=1e-4, atol=1e-3 * max(k, 1))}
        tensors = [on(backend, a) for a in s.arrays]
        try:
            check_close(call(op, tensors, s), ref, out_dtype, tol)
            # The method variant on a non-contiguous layout of the first input.
            if op.kind in ("matmul", "bmm"):
                swapped = on(backend, np.ascontiguousarray(np.swapaxes(s.arrays[0], -1, -2))).transpose(-1, -2)
                check_close(call(op, [swapped, tensors[1]], s, method=True), ref, out_dtype, tol)
            else:
                check_close(call(op, [noncontiguous(tensors[0])] + tensors[1:], s, method=True), ref, out_dtype, tol)
            # A CPU 0-dim operand (a wrapped number, say) with a tensor on another device.
            if backend != "cpu" and op.arity == 2 and s.arrays[1].ndim == 0 and op.kind == "elementwise":
                check_close(call(op, [tensors[0], tl.from_numpy(s.arrays[1].copy())], s), ref, out_dtype, tol)
            if op.has_out:
                out = tl.empty(ref.shape, dtype=getattr(tl, out_dtype), device=backend)
                if backend == "cpu" or op.cuda_out:
                    assert call(op, tensors, s, out=out) is out
                    check_close(out, ref, out_dtype, tol)
                else:
                    refuses(lambda: call(op, tensors, s, out=out), NO_CUDA_KERNEL)
            floats = all(a.dtype.kind == "f" for a in s.arrays)  # only floating inputs can require grad
            if op.grad and floats and max(a.size for a in s.arrays) <= GRAD_MAX_ELEMENTS:
                check_grad(op, s, dtype, backend, rng)
        except AssertionError as e:
            raise AssertionError(f"sample {s.label}: {e}") from e


PARAMS = [pytest.param(op, backend, dtype, id=f"{op.name}-{backend}-{dtype}")
          for op in OPS for backend in BACKENDS for dtype in ALL]


@pytest.mark.parametrize("op,backend,dtype", PARAMS)
def test_op(op: OpInfo, backend: str, dtype: str, record_property):
    record_property("opinfo", (op.name, backend, dtype))
    supported = dtype in op.backend_dtypes(backend)
    record_property("coverage", "ok" if supported else "refused")  # what the table declares
    reason = unavailable(backend)
    if reason:
        pytest.skip(f"{backend}: {reason}")
    if supported:
        check_supported(op, backend, dtype)
        if backend != "cpu":
            tl.cuda.synchronize()  # a kernel's error surfaces here at the latest
        return
    # Refused: by torch's rule (every backend), or for want of a kernel on this backend.
    pattern = op.refused.get(dtype, NO_CUDA_KERNEL)
    if backend != "cpu":
        pattern = f"{pattern}|{NO_CUDA_KERNEL}"
    s = next(x for x in samples(op, dtype, np.random.default_rng(0)) if min(a.size for a in x.arrays) > 0)
    tensors = [on(backend, a) for a in s.arrays]
    refuses(lambda: call(op, tensors, s), pattern)
