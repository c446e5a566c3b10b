"""The ops' behaviour beyond the op-info table (test_opinfo.py runs every op on
every backend against NumPy): Python scalars, alpha and in-place, where, reduction
errors, matmul broadcasting, softmax, factories, views, indexing, conversion, and the
unary ops' SIMD kernels over the whole float range."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from opinfo import ALL
from test_opinfo import TOL

from conftest import requires_build, tl

pytestmark = requires_build

@pytest.mark.parametrize("name,ref", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)])
def test_python_scalars_follow_torch_promotion(name, ref):
    x = tl.tensor([1, 2, 3], dtype=tl.int32)
    assert getattr(tl, name)(x, 2).dtype == tl.int32      # int scalar keeps int32
    assert getattr(tl, name)(x, 2.5).dtype == tl.float32  # float scalar -> default float
    if name == "sub":  # torch refuses a bool operand in a subtraction (opinfo.RULES)
        with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
            tl.sub(x, True)
    else:
        assert getattr(tl, name)(x, True).dtype == tl.int32
    y = tl.tensor([1.0, 2.0], dtype=tl.float32)
    assert getattr(tl, name)(y, tl.tensor(2.0, dtype=tl.float64)).dtype == tl.float32  # 0-dim is lower priority
    assert getattr(tl, name)(tl.tensor([1], dtype=tl.uint8), tl.tensor([1], dtype=tl.int32)).dtype == tl.int32
    np.testing.assert_allclose(getattr(tl, name)(y, 1.5).numpy(), ref(y.numpy(), np.float32(1.5)))


def test_alpha_and_inplace():
    a = tl.tensor([1.0, 2.0, 3.0])
    b = tl.tensor([10.0, 20.0, 30.0])
    np.testing.assert_allclose(tl.add(a, b, alpha=2).numpy(), [21, 42, 63])
    np.testing.assert_allclose(tl.sub(a, b, alpha=0.5).numpy(), [-4, -8, -12])
    v0 = a._version
    r = a.add_(b)
    assert r is a and a._version > v0
    np.testing.assert_allclose(a.numpy(), [11, 22, 33])
    a.mul_(2)
    np.testing.assert_allclose(a.numpy(), [22, 44, 66])
    i = tl.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(tl.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        tl.zeros(3).add_(tl.zeros(2, 3))


def test_where():
    rng = np.random.default_rng(1)
    c = rng.random((3, 4)) > 0.5
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4,)).astype(np.float64)
    r = tl.where(tl.from_numpy(c), tl.from_numpy(a), tl.from_numpy(b))
    assert r.dtype == tl.float64
    np.testing.assert_allclose(r.numpy(), np.where(c, a, b))
    np.testing.assert_allclose(tl.where(tl.from_numpy(c), tl.from_numpy(a), 0.0).numpy(), np.where(c, a, 0))


@pytest.mark.parametrize("name,ref", [("add", np.add), ("mul", np.multiply)])
def test_contiguous_float_kernels_past_the_cache(name, ref):
    """float32 add/mul over 4M elements: pieces on every thread, and operands of 48 MB, past
    the last-level cache of most machines, so the result is written with streaming stores
    (an output one element off its vector alignment: scalar stores up to the first aligned
    vector, plain ones after the last)."""
    rng = np.random.default_rng(2)
    n = (1 << 22) + 3
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 1, np.nan, np.float32)
    getattr(tl, name)(tl.from_numpy(a), tl.from_numpy(b), out=tl.from_numpy(out[1:]))
    np.testing.assert_array_equal(out[1:], ref(a, b))
    assert np.isnan(out[0])


def test_float_sums_over_many_elements():
    """float32 sums of 4M elements (whole, per row, per column) stay as accurate as summing
    the float64 values would suggest: no long single-precision accumulation chain."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((1024, 4096)) + 1).astype(np.float32)
    t, exact = tl.from_numpy(x), x.astype(np.float64)
    assert abs(t.sum().item() - exact.sum()) <= 1e-6 * np.abs(exact).sum()
    np.testing.assert_allclose(t.sum(dim=[1]).numpy(), exact.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(t.sum(dim=[0]).numpy(), exact.sum(axis=0), rtol=1e-5)


def test_float_sums_do_not_depend_on_the_thread_count():
    """The pieces of a sum are combined in a fixed order (blocks of a long row, blocks of
    rows for a column sum), so one thread and two give the same bits."""
    code = ("import sys, numpy as np, tensorlet as tl\n"
            "x = np.random.default_rng(4).standard_normal((4096, 512)).astype(np.float32)\n"
            "t = tl.from_numpy(x)\n"
            "sys.stdout.buffer.write(t.sum().numpy().tobytes() + t.sum(dim=[0]).numpy().tobytes()"
            " + t.sum(dim=[1]).numpy().tobytes())\n")
    package_parent = str(Path(tl.__file__).resolve().parent.parent)
    results = []
    for threads in ("1", "2"):
        env = {**os.environ, "OMP_NUM_THREADS": threads, "PYTHONPATH": package_parent}
        results.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout)
    assert len(results[0]) == 4 * (1 + 512 + 4096) and results[0] == results[1]


def test_reduction_dtype_and_errors():
    x = tl.tensor([[1, 2], [3, 4]], dtype=tl.int32)
    assert x.sum().dtype == tl.int64
    assert x.sum(dtype=tl.float64).dtype == tl.float64
    with pytest.raises(RuntimeError, match="mean"):
        x.mean()
    with pytest.raises(IndexError, match="non-zero size"):
        tl.zeros(0, 3).amax(0)
    nan = tl.tensor([1.0, float("nan"), 3.0])
    assert np.isnan(nan.amax().item()) and nan.argmax().item() == 1


def test_matmul_broadcasting_and_operator():
    rng = np.random.default_rng(4)
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (4, 3, 2))]:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        np.testing.assert_allclose((tl.from_numpy(a) @ tl.from_numpy(b)).numpy(), a @ b, rtol=1e-10)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        tl.mm(tl.zeros(2, 3), tl.zeros(2, 3))


def _np_softmax(a, dim):
    a = a.astype(np.float64)
    e = np.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_log_softmax(dtype):
    """The fused row kernel (vectorized exp plus a scalar tail) on rows of several
    lengths, along the last dim and others (the transposed path), and its edges."""
    rng = np.random.default_rng(5)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)
    for shape in ((4, 7), (3, 1000), (2, 3, 17), (1, 1)):
        a = rng.standard_normal(shape).astype(dtype) * 10
        for dim in range(-1, len(shape)):
            ref = _np_softmax(a, dim)
            x = tl.from_numpy(a)
            np.testing.assert_allclose(x.softmax(dim).numpy(), ref, **tol)
            np.testing.assert_allclose(tl.log_softmax(x, dim).numpy(), np.log(ref), **tol)
            # A non-contiguous input gives the same.
            if len(shape) > 1:
                t = tl.from_numpy(np.ascontiguousarray(a.T)).t() if len(shape) == 2 else x
                np.testing.assert_allclose(t.softmax(dim).numpy(), ref, **tol)
    # -inf (a masked position) gives exactly 0; a row of large values does not overflow.
    m = np.array([[0.0, -np.inf, 1.0, -np.inf] * 5, [1000.0, 999.0, -1000.0, 0.0] * 5], dtype=dtype)
    got = tl.from_numpy(m).softmax(1).numpy()
    assert (got[0][1::2] == 0).all()
    np.testing.assert_allclose(got, _np_softmax(m, 1), **tol)
    # log_softmax's results near 0 in rows of large values (a vector lane and the scalar
    # tail): (x - max) - log(sum), in torch's order, keeps them within a few ulp of 1 (what
    # log(sum) of a sum near 1 can be); x - (max + log(sum)) rounded at 1000's magnitude
    # (1.4e-5 off in float32, 20 % of the result).
    big = np.full((3, 20), -1000.0, dtype=dtype)
    for row, (d, at) in enumerate(((3.0, 0), (7.0, 17), (9.5, 1))):
        big[row, at], big[row, (at + 5) % 20] = 1000.0, 1000.0 - d
    shifted = big.astype(np.float64) - big.max(axis=1, keepdims=True)
    want = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))  # float64 (exp(-2000) is 0: no log of it)
    got = tl.log_softmax(tl.from_numpy(big), 1).numpy()
    near_zero = (np.arange(3), np.array([0, 17, 1]))
    np.testing.assert_allclose(got[near_zero], want[near_zero], rtol=1e-6, atol=4 * np.finfo(dtype).eps)
    # NaN anywhere in a row makes that row NaN (torch); other rows are untouched.
    n = np.ones((2, 9), dtype=dtype)
    n[0, 4] = np.nan
    got = tl.from_numpy(n).softmax(1).numpy()
    assert np.isnan(got[0]).all() and np.allclose(got[1], 1 / 9)


def test_softmax_dtypes_and_shapes():
    i = tl.tensor([[1, 2, 3]], dtype=tl.int64)
    with pytest.raises(RuntimeError, match="not implemented for 'int64'"):  # as torch refuses it
        i.softmax(1)
    assert i.softmax(1, dtype=tl.float32).dtype == tl.float32  # dtype= casts first
    f = tl.tensor([[1.0, 2.0]])
    assert f.softmax(1, dtype=tl.float64).dtype == tl.float64
    np.testing.assert_allclose(f.softmax(1, dtype=tl.float64).numpy(), _np_softmax(np.array([[1.0, 2.0]]), 1))
    assert tl.tensor(3.0).softmax(0).item() == 1.0 and tl.tensor(3.0).log_softmax(-1).item() == 0.0
    assert tl.zeros(0, 5).softmax(1).shape == (0, 5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        tl.zeros(2, 3).softmax(2)


# ---- creation, views, indexing, conversion ----------------------------------------------

def test_factories():
    assert tl.zeros(2, 3).shape == (2, 3) and tl.zeros((2, 3)).dtype == tl.float32
    np.testing.assert_array_equal(tl.ones(4, dtype=tl.int64).numpy(), np.ones(4, dtype=np.int64))
    np.testing.assert_array_equal(tl.full((2, 2), 7).numpy(), np.full((2, 2), 7))
    assert tl.full((1,), 7).dtype == tl.int64 and tl.full((1,), 7.0).dtype == tl.float32
    np.testing.assert_array_equal(tl.arange(5).numpy(), np.arange(5))
    np.testing.assert_allclose(tl.arange(0, 1, 0.25).numpy(), np.arange(0, 1, 0.25))
    assert tl.arange(5).dtype == tl.int64 and tl.arange(1.0, 3.0).dtype == tl.float32
    tl.manual_seed(0)
    a = tl.rand(3, 4)
    tl.manual_seed(0)
    assert np.array_equal(a.numpy(), tl.rand(3, 4).numpy())
    assert 0 <= a.numpy().min() and a.numpy().max() < 1
    r = tl.randn(10000)
    assert abs(r.mean().item()) < 0.05 and abs(r.numpy().std() - 1) < 0.05
    # Refused as torch refuses them, with its class: "arange_cpu" / "check_uniform_bounds" not implemented for ...
    with pytest.raises(RuntimeError, match="arange: not implemented for 'bool'"):
        tl.arange(0, 3, dtype=tl.bool)
    for factory in (tl.rand, tl.randn):
        with pytest.raises(RuntimeError, match="not implemented for 'int32'"):
            factory(2, dtype=tl.int32)
    assert tl.empty(2, 0).numel() == 0
    t = tl.zeros(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert tl.zeros_like(tl.ones(2, 3, dtype=tl.int32)).dtype == tl.int32


def test_tensor_and_numpy_interop():
    t = tl.tensor([[1, 2], [3, 4]])
    assert t.dtype == tl.int64 and t.tolist() == [[1, 2], [3, 4]]
    assert tl.tensor(3.5).dtype == tl.float32 and tl.tensor(3.5).item() == 3.5
    assert tl.tensor([True, False]).dtype == tl.bool
    assert tl.tensor(np.zeros(2, dtype=np.float64)).dtype == tl.float64
    assert tl.tensor([1, 2], dtype=tl.float64).dtype == tl.float64
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    s = tl.from_numpy(a)
    a[0, 0] = 42  # shares memory
    assert s[0, 0].item() == 42
    back = s.numpy()
    back[1, 1] = -1
    assert a[1, 1] == -1
    assert tl.from_numpy(a[:, ::2]).stride() == (3, 2)
    assert tl.from_numpy(np.array(5, dtype=np.int32)).dim() == 0
    for name in ALL:
        x = tl.from_numpy(np.zeros(3, dtype=name))
        assert x.dtype == getattr(tl, name) and x.numpy().dtype == np.dtype(name)
    with pytest.raises(TypeError, match="can't convert"):
        tl.from_numpy(np.zeros(2, dtype=np.float16))


def test_views_share_storage_and_strides():
    x = tl.arange(24).view(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.is_contiguous()
    p = x.permute(2, 0, 1)
    assert p.shape == (4, 2, 3) and p.stride() == (1, 12, 4) and not p.is_contiguous()
    assert x.transpose(0, 2).shape == (4, 3, 2)
    np.testing.assert_array_equal(p.contiguous().numpy(), np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1))
    assert x.reshape(6, 4).data_ptr() == x.data_ptr()
    r = p.reshape(-1)  # needs a copy
    np.testing.assert_array_equal(r.numpy(), np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1).reshape(-1))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        p.view(-1)
    e = tl.tensor([1, 2, 3]).view(3, 1).expand(3, 4)
    assert e.stride() == (1, 0) and e.shape == (3, 4)
    assert tl.zeros(1, 3, 1).squeeze().shape == (3,)
    assert tl.zeros(1, 3, 1).squeeze(0).shape == (3, 1)
    assert tl.zeros(3).unsqueeze(0).shape == (1, 3) and tl.zeros(3).unsqueeze(-1).shape == (3, 1)
    v = x.view(6, 4)
    v.add_(1)  # writes through the view
    assert x[0, 0, 0].item() == 1


def test_indexing():
    a = np.arange(60).reshape(3, 4, 5)
    x = tl.from_numpy(a.copy())
    for key in [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (slice(1, None), slice(None, None, 2)),
                (None, 0), (0, None, slice(1, 3)), (Ellipsis, None), (slice(-2, None),), (slice(10, 20),)]:
        np.testing.assert_array_equal(x[key].numpy(), a[key], err_msg=str(key))
    assert x[1, 2, 3].item() == a[1, 2, 3]
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]
    x[0, 1] = 100
    x[2] = tl.zeros(4, 5, dtype=tl.int64)
    a[0, 1] = 100
    a[2] = 0
    np.testing.assert_array_equal(x.numpy(), a)


def test_copy_and_to():
    x = tl.tensor([1.5, -2.5, 3.0])
    assert x.to(tl.int64).tolist() == [1, -2, 3]
    assert x.to(tl.bool).tolist() == [True, True, True]
    assert x.to(tl.float32) is x
    assert x.to(dtype=tl.float64).dtype == tl.float64 and x.double().dtype == tl.float64
    y = tl.zeros(2, 3, dtype=tl.float64)
    y.copy_(tl.tensor([1, 2, 3], dtype=tl.int32))  # broadcast + cast
    np.testing.assert_array_equal(y.numpy(), [[1, 2, 3], [1, 2, 3]])
    c = x.clone()
    c.add_(1)
    assert x.tolist() == [1.5, -2.5, 3.0]
    assert tl.tensor([[1.0, 2.0]]).t().shape == (2, 1)


def test_python_operators_and_metadata():
    a = tl.tensor([1.0, 2.0, 3.0])
    b = tl.tensor([3.0, 2.0, 1.0])
    assert (a + b).tolist() == [4, 4, 4] and (a - 1).tolist() == [0, 1, 2] and (2 - a).tolist() == [1, 0, -1]
    assert (a * 2).tolist() == [2, 4, 6] and (1 / tl.tensor([2.0])).tolist() == [0.5]
    assert (-a).tolist() == [-1, -2, -3] and (a @ b).item() == 10
    assert (a == b).tolist() == [False, True, False] and (a < b).tolist() == [True, False, False]
    assert (a > b).tolist() == [False, False, True] and (a != b).tolist() == [True, False, True]
    assert (a <= b).tolist() == [True, True, False] and (a >= b).tolist() == [False, True, True]
    a += 1
    assert a.tolist() == [2, 3, 4]
    assert a.device == tl.device("cpu") and str(a.device) == "cpu" and a.dim() == 1 and a.numel() == 3
    assert a.size() == (3,) and a.size(0) == 3 and len(a) == 3
    assert repr(tl.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(tl.tensor([1, 2], dtype=tl.int32)) == "tensor([1, 2], dtype=tensorlet.int32)"
    assert "grad_fn=<MulBackward0>" in repr(tl.ones(2, requires_grad=True) * 2)
    assert repr(tl.float64) == "tensorlet.float64"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 67])  # the scalar loop, and the vector body with a tail
def test_sign_of_zero_in_abs_and_relu(dtype, n):
    """As torch: abs clears the sign bit (abs(-0.0) is 0.0), relu zeroes only negatives
    (relu(-0.0) is -0.0); on a contiguous run and a strided view."""
    x = np.full(n, -0.0, dtype)
    for t in (tl.from_numpy(x), tl.from_numpy(np.repeat(x, 2))[::2]):
        assert not np.signbit(tl.abs(t).numpy()).any()
        assert np.signbit(tl.relu(t).numpy()).all()


def test_relu_out_takes_only_its_inputs_dtype():
    """As torch's aten relu.out (torch.relu has no out=): no cast into another dtype."""
    with pytest.raises(RuntimeError, match="relu: Found dtype float64 but expected float32"):
        tl.relu(tl.ones(2), out=tl.empty(0, dtype=tl.float64))


def test_neg_bool_and_bad_arguments_raise():
    with pytest.raises(RuntimeError, match="Negation"):
        -tl.tensor([True])
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        tl.add(tl.zeros(2), "x")


# The child of test_unary_simd_kernels: each unary op over every kind of float (random
# bit patterns: normal, subnormal, infinite, NaN; typical ranges; the edges of the
# approximations), an odd length so that runs end in a tail, the output one element
# off its alignment. It writes the inputs and tensorlet's results back as .npy.
UNARY_CHILD = """
import io, sys, numpy as np, tensorlet as tl
rng = np.random.default_rng(6)
dtype = np.dtype(sys.argv[1])
info = np.finfo(dtype)
bits = rng.integers(0, np.iinfo(np.uint32 if dtype == np.float32 else np.uint64).max, 200_001,
                    dtype=np.uint32 if dtype == np.float32 else np.uint64, endpoint=True)
edges = [0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, -info.tiny, info.max, -info.max, info.smallest_subnormal,
         1, -1, 0.5, 20, -20, 88.72, -87.34, -103.9, 709.78, -708.4, -745.1, 1.4142135, 0.70710677]
x = np.concatenate([bits.view(dtype), rng.uniform(-40, 40, 100_001).astype(dtype),
                    rng.uniform(-1e-3, 1e-3, 10_001).astype(dtype), np.array(edges, dtype)])
out = io.BytesIO()
np.save(out, x)
for op in sys.argv[2:]:
    result = np.empty(x.size + 1, dtype)
    getattr(tl, op)(tl.from_numpy(x), out=tl.from_numpy(result[1:]))
    np.save(out, result[1:])
sys.stdout.buffer.write(out.getvalue())
"""
UNARY_REFERENCE = {  # NumPy's libm, in the input's dtype, with the rules of ops/UnaryOps.h
    "neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "tanh": np.tanh,
    "relu": lambda x: np.where(x < 0, 0, x).astype(x.dtype),  # NaN and -0.0 pass, as in torch
    "sign": lambda x: ((x > 0).astype(x.dtype) - (x < 0)).astype(x.dtype),  # NaN gives 0
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}


@pytest.mark.parametrize("capability", ["default", "avx2", "best"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_simd_kernels(capability, dtype):
    """The SIMD kernels of the unary ops (contiguous float32/float64 runs; each CPU
    variant, TENSORLET_CPU_CAPABILITY) agree with libm within the op-info tolerance over
    the whole float range, and exactly where libm's result is NaN, infinite or zero (the
    sign of a zero included)."""
    env = {**os.environ, "PYTHONPATH": str(Path(tl.__file__).resolve().parent.parent)}
    if capability != "best":
        env["TENSORLET_CPU_CAPABILITY"] = capability
    child = subprocess.run([sys.executable, "-c", UNARY_CHILD, dtype, *UNARY_REFERENCE], env=env,
                           capture_output=True, check=True)
    stream = io.BytesIO(child.stdout)
    x = np.load(stream)
    with np.errstate(all="ignore"):
        for op, reference in UNARY_REFERENCE.items():
            got, want = np.load(stream), reference(x)
            exact = ~np.isfinite(want) | (want == 0)
            np.testing.assert_array_equal(got[exact], want[exact], err_msg=op)
            zero = want == 0  # and the sign of a zero (torch's abs(-0.0) is 0.0, relu(-0.0) -0.0)
            np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg=f"{op}: sign of 0")
            np.testing.assert_allclose(got[~exact], want[~exact], rtol=TOL[dtype]["rtol"], atol=0, err_msg=op)
