"""The op-info table: every public op, the dtypes it supports and refuses on each
backend, its semantics rules, a NumPy reference and the sample inputs every
backend is checked over (test_opinfo.py runs them, as ggml's test-backend-ops).

Semantics follow PyTorch, not NumPy, where the two disagree (tensorlet's API
carries torch's names): each OpInfo's `refused` lists the dtypes torch refuses
for that op (with the error both libraries raise), and RULES states the rules
that are not a dtype list (promotion, integer division, bool arithmetic, alpha,
in-place casts). test_semantics.py checks every rule on tensorlet and, where
torch is installed, on torch too, so the table cannot drift from torch.

    python examples/tensorlet/test/opinfo.py    # prints the declared table
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

import numpy as np

ALL = ("bool", "uint8", "int32", "int64", "float32", "float64")
NUMERIC = ("uint8", "int32", "int64", "float32", "float64")
FLOATS = ("float32", "float64")
BACKENDS = ("cpu", "cuda")

# What each refusal says, in tensorlet and in torch (one regex for both).
BOOL_SUB = r"Subtraction, the `-` operator, with (two bool tensors|a bool tensor) is not supported"
BOOL_NEG = r"Negation, the `-` operator, on a bool tensor is not supported"
NOT_FOR_BOOL = r"not implemented for '[Bb]ool'"
MEAN_INT = r"mean\(\): could not infer output dtype"
# torch: "softmax_lastdim_kernel_impl" not implemented for 'Long'; tensorlet names its dtype.
SOFTMAX_INT = r"not implemented for '(Bool|Byte|Int|Long|bool|uint8|int32|int64)'"
# A backend without a kernel for an op: the dispatcher's error names the op and the key.
NO_CUDA_KERNEL = r"no kernel for op tensorlet::[\w.]+ on key CUDA"


@dataclass
class OpInfo:
    name: str
    ref: Callable
    dtypes: tuple                     # accepted on the CPU (as torch accepts them)
    refused: dict = field(default_factory=dict)  # dtype -> regex of the error (torch refuses it too)
    cuda: Optional[tuple] = None      # dtypes with a CUDA kernel (None: all of `dtypes`); the rest refuse there
    arity: int = 1                    # tensor inputs
    kind: str = "elementwise"         # elementwise | reduction | matmul | bmm | softmax
    promotes_to_float: bool = False   # integer and bool inputs give float32 (exp, div...)
    bool_result: bool = False
    domain: Optional[tuple] = None    # (low, high) for sampled inputs
    has_out: bool = True              # an out= overload (CPU)
    cuda_out: bool = True             # ... with a CUDA kernel too
    grad: bool = False                # differentiable (derivatives.yaml): gradients checked

    def __post_init__(self) -> None:
        if self.cuda is None:  # CUDA is a backend of the same ops, not a second implementation
            self.cuda = self.dtypes
        # Every dtype is either supported or refused with a stated error: nothing unlisted.
        assert set(self.dtypes) | set(self.refused) == set(ALL), self.name
        assert not set(self.dtypes) & set(self.refused), self.name
        assert set(self.cuda) <= set(self.dtypes), self.name

    def backend_dtypes(self, backend: str) -> tuple:
        return self.dtypes if backend == "cpu" else self.cuda


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_relu(x):
    return np.where(x < 0, np.zeros_like(x), x)  # torch's: NaN and -0.0 pass


def _np_sign(x):
    # NumPy has no sign for bool; torch's is the identity there.
    return x.copy() if x.dtype == np.bool_ else np.sign(x)


def _np_sum(x, **kw):
    out = np.sum(x, **kw)
    return np.asarray(out).astype(np.int64) if x.dtype.kind in "biu" else out


def _np_log_softmax(x, axis):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return np.zeros_like(x)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _np_softmax(x, axis):
    return np.exp(_np_log_softmax(x, axis))


OPS = [
    OpInfo("add", np.add, ALL, arity=2, grad=True),
    OpInfo("sub", np.subtract, NUMERIC, {"bool": BOOL_SUB}, arity=2, grad=True),
    OpInfo("mul", np.multiply, ALL, arity=2, grad=True),
    OpInfo("div", np.true_divide, ALL, arity=2, promotes_to_float=True, domain=(1, 5), grad=True),
    OpInfo("maximum", np.maximum, ALL, arity=2, grad=True),
    OpInfo("eq", np.equal, ALL, arity=2, bool_result=True),
    OpInfo("lt", np.less, ALL, arity=2, bool_result=True),
    OpInfo("gt", np.greater, ALL, arity=2, bool_result=True),
    OpInfo("neg", np.negative, NUMERIC, {"bool": BOOL_NEG}, grad=True),
    OpInfo("exp", np.exp, ALL, promotes_to_float=True, domain=(-3, 3), grad=True),
    OpInfo("log", np.log, ALL, promotes_to_float=True, domain=(1, 9), grad=True),
    OpInfo("sqrt", np.sqrt, ALL, promotes_to_float=True, domain=(0, 9), grad=True),
    OpInfo("abs", np.abs, NUMERIC, {"bool": NOT_FOR_BOOL}, grad=True),
    OpInfo("relu", _np_relu, NUMERIC, {"bool": r"Boolean inputs not supported for relu"}, grad=True),
    OpInfo("sigmoid", _np_sigmoid, ALL, promotes_to_float=True, domain=(-4, 4), grad=True),
    OpInfo("tanh", np.tanh, ALL, promotes_to_float=True, domain=(-3, 3), grad=True),
    OpInfo("sign", _np_sign, ALL, grad=True),
    OpInfo("sum", _np_sum, ALL, kind="reduction", has_out=False, grad=True),
    OpInfo("mean", np.mean, FLOATS, {d: MEAN_INT for d in ("bool", "uint8", "int32", "int64")}, kind="reduction",
           has_out=False, grad=True),
    OpInfo("amax", np.max, ALL, kind="reduction", has_out=False, grad=True),
    OpInfo("argmax", np.argmax, NUMERIC, {"bool": r"argmax\(\): does not support bool input"}, kind="reduction",
           has_out=False),
    OpInfo("mm", np.matmul, NUMERIC, {"bool": NOT_FOR_BOOL}, arity=2, kind="matmul", grad=True),
    OpInfo("matmul", np.matmul, NUMERIC, {"bool": NOT_FOR_BOOL}, arity=2, kind="matmul", has_out=False, grad=True),
    OpInfo("bmm", np.matmul, NUMERIC, {"bool": NOT_FOR_BOOL}, arity=2, kind="bmm", has_out=False, grad=True),
    # Over one dim (the samples' argument); bool and integer inputs only with dtype=.
    OpInfo("softmax", _np_softmax, FLOATS, {d: SOFTMAX_INT for d in ("bool", "uint8", "int32", "int64")},
           kind="softmax", has_out=False, grad=True),
    OpInfo("log_softmax", _np_log_softmax, FLOATS, {d: SOFTMAX_INT for d in ("bool", "uint8", "int32", "int64")},
           kind="softmax", has_out=False, grad=True),
]
OPS_BY_NAME = {op.name: op for op in OPS}


# ---- type promotion (torch's rules, which NumPy does not share) ------------------------

def category(dtype: str) -> int:
    return 0 if dtype == "bool" else 2 if dtype.startswith("float") else 1


def promote(dtypes: list[str], dims: list[int]) -> str:
    """torch.result_type for tensors: dimensioned tensors decide, a 0-dim tensor only
    when it is of a higher category (bool < integer < float) than all of them."""
    dimmed = [d for d, n in zip(dtypes, dims) if n > 0] or dtypes
    zero = [d for d, n in zip(dtypes, dims) if n == 0]
    result = _promote_pairwise(dimmed)
    if zero:
        z = _promote_pairwise(zero)
        if category(z) > category(result):
            result = z
    return result


def _promote_pairwise(dtypes: list[str]) -> str:
    # uint8 with a signed integer type gives the signed one (int32/int64 hold all of uint8).
    return max(dtypes, key=ALL.index)


def result_dtype(op: OpInfo, dtypes: list[str], dims: list[int]) -> str:
    if op.bool_result:
        return "bool"
    r = promote(dtypes, dims)
    if op.promotes_to_float and category(r) < 2:
        r = "float32"  # the default float dtype: int / int is true division
    return r


# ---- sample inputs ---------------------------------------------------------------------

def sample(shape, dtype: str, rng: np.random.Generator, domain=None) -> np.ndarray:
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    lo, hi = domain or ((0, 10) if dtype == "uint8" else (-5, 5))
    if dtype in FLOATS:
        return np.asarray(rng.uniform(lo, hi, shape).astype(dtype))
    return np.asarray(rng.integers(max(lo, 0) if dtype == "uint8" else lo, hi, shape).astype(dtype))


ELEMENTWISE_SHAPES = [
    ("0-dim", (), ()),
    ("empty", (0, 3), (0, 3)),
    ("same", (3, 4), (3, 4)),
    ("broadcast-row", (3, 4), (4,)),
    ("broadcast-both", (3, 1), (1, 4)),
    ("broadcast-0dim", (2, 3), ()),
    ("large", (300, 257), (300, 257)),  # crosses the CPU's parallel grain size
]
REDUCTION_CASES = [((), None), ((5,), None), ((4, 6), 0), ((4, 6), 1), ((3, 4, 5), 1), ((3, 4, 5), (0, 2)),
                   ((2, 0, 3), 2), ((513, 129), -1), ((1000, 70), 0)]
# (shape, dim): 0-dim, empty, each dim of a matrix and a 3-d tensor, rows short enough for a
# warp per row on CUDA and long enough for a block per row (over 1024), many short rows.
SOFTMAX_CASES = [((), 0), ((5,), 0), ((0, 3), 1), ((4, 6), 0), ((4, 6), -1), ((3, 4, 5), 1), ((2, 3, 4), 0),
                 ((3, 2500), 1), ((2500, 3), 0), ((700, 33), -1)]
MATMUL_CASES = [(1, 1, 1), (3, 4, 5), (0, 3, 2), (3, 0, 2), (67, 129, 33), (130, 257, 70)]


@dataclass
class Sample:
    label: str
    arrays: list            # the NumPy inputs
    args: tuple = ()        # extra positional arguments (reduction dims, keepdim)
    ref_kwargs: dict = field(default_factory=dict)


def samples(op: OpInfo, dtype: str, rng: np.random.Generator) -> Iterator[Sample]:
    """The same inputs for every backend: 0-dim, empty, broadcast and larger cases."""
    if op.kind == "elementwise":
        for label, sa, sb in ELEMENTWISE_SHAPES:
            arrays = [sample(sa, dtype, rng, op.domain), sample(sb, dtype, rng, op.domain)][: op.arity]
            yield Sample(label, arrays)
        if op.arity == 2:  # promotion on the backend: the other operand of another dtype
            other = "float64" if dtype != "float64" else "int32"
            yield Sample(f"mixed-{other}", [sample((3, 4), dtype, rng, op.domain), sample((4,), other, rng, op.domain)])
    elif op.kind == "reduction":
        for shape, dims in REDUCTION_CASES:
            empty_dim = 0 in shape and (dims is None or shape[dims if isinstance(dims, int) else 0] == 0)
            if op.name in ("amax", "argmax", "mean") and empty_dim:
                continue  # no identity: refused (test_ops checks the error), or nan for mean
            if op.name == "argmax" and isinstance(dims, tuple):
                continue  # argmax takes one dim
            a = sample(shape, dtype, rng)
            if dims is None:
                yield Sample(f"{shape}-all", [a])
            else:
                for keepdim in (False, True):
                    yield Sample(f"{shape}-dim{dims}-keep{int(keepdim)}", [a], (dims, keepdim),
                                 dict(axis=dims, keepdims=keepdim))
    elif op.kind == "softmax":
        for shape, dim in SOFTMAX_CASES:
            yield Sample(f"{shape}-dim{dim}", [sample(shape, dtype, rng, op.domain)], (dim,), dict(axis=dim))
    else:
        for m, k, n in MATMUL_CASES:
            lead = (2,) if op.kind == "bmm" else ()
            yield Sample(f"{m}x{k}x{n}", [sample(lead + (m, k), dtype, rng, (0, 3)), sample(lead + (k, n), dtype, rng, (0, 3))])


# ---- the semantics rules that are not a dtype list -------------------------------------
# Each check takes the library (tensorlet or torch) and raises AssertionError when the
# rule does not hold; test_semantics.py runs each on both.

@dataclass
class Rule:
    ops: tuple
    text: str
    check: Callable


def _t(T, values, dtype):
    return T.from_numpy(np.asarray(values, dtype=dtype))


def _dt(t) -> str:
    return str(t.dtype).split(".")[-1]


def _refuses(fn, pattern: str, error: type = RuntimeError) -> None:
    """fn raises `error` (torch's class for the refusal: RuntimeError for a dtype it
    refuses, TypeError for arguments no overload takes) with a message matching pattern."""
    import re
    try:
        fn()
    except Exception as e:
        assert isinstance(e, error), f"refused with {type(e).__name__}, not {error.__name__}: {e}"
        assert re.search(pattern, str(e)), f"refused, but with {type(e).__name__}: {e}"
        return
    raise AssertionError(f"accepted; expected a refusal matching {pattern!r}")


def _promotion_pairs(T):
    for op in ("add", "mul", "maximum"):
        for a in ALL:
            for b in ALL:
                for dims in ((1, 1), (1, 0), (0, 1)):
                    x = _t(T, [1] * dims[0] if dims[0] else 1, a)
                    y = _t(T, [1] * dims[1] if dims[1] else 1, b)
                    want = promote([a, b], list(dims))
                    assert _dt(getattr(T, op)(x, y)) == want, (op, a, b, dims, want)


def _python_scalars(T):
    for d in ("uint8", "int32", "int64"):
        x = _t(T, [1, 2], d)
        assert _dt(T.add(x, 2)) == d and _dt(T.mul(x, True)) == d and _dt(T.add(x, 2.5)) == "float32"
    b = _t(T, [True, False], "bool")
    assert _dt(T.add(b, 2)) == "int64" and _dt(T.add(b, 2.5)) == "float32" and _dt(T.mul(b, True)) == "bool"
    assert _dt(T.add(_t(T, [1.0], "float64"), 2.5)) == "float64"


def _true_division(T):
    for d in ("bool", "uint8", "int32", "int64"):
        r = T.div(_t(T, [7, 0], d), _t(T, [2, 0], d))
        assert _dt(r) == "float32", (d, r.dtype)
    r = T.div(_t(T, [7, -7], "int64"), _t(T, [2, 2], "int64"))
    assert r.tolist() == [3.5, -3.5]
    r = T.div(_t(T, [1, -1, 0], "int32"), _t(T, [0, 0, 0], "int32"))
    v = r.tolist()
    assert v[0] == float("inf") and v[1] == float("-inf") and v[2] != v[2]  # no integer division error


def _bool_arithmetic(T):
    a, b = _t(T, [True, True, False, False], "bool"), _t(T, [True, False, True, False], "bool")
    assert T.add(a, b).tolist() == [True, True, True, False] and _dt(T.add(a, b)) == "bool"
    assert T.mul(a, b).tolist() == [True, False, False, False] and _dt(T.mul(a, b)) == "bool"
    assert _dt(T.sum(a)) == "int64" and T.sum(a).item() == 2
    for other in (b, _t(T, [1, 2, 3, 4], "int32"), _t(T, [1.0] * 4, "float32")):
        _refuses(lambda: T.sub(a, other), BOOL_SUB)
        _refuses(lambda: T.sub(other, a), BOOL_SUB)
    _refuses(lambda: T.sub(_t(T, [1, 2], "int64"), True), BOOL_SUB)
    _refuses(lambda: T.neg(a), BOOL_NEG)


def _alpha(T):
    i, f, b = _t(T, [1, 2], "int64"), _t(T, [1.0, 2.0], "float32"), _t(T, [True, False], "bool")
    _refuses(lambda: T.add(i, i, alpha=2.5), "For integral input tensors, argument alpha must not be a floating point")
    _refuses(lambda: T.add(b, b, alpha=2.5),
             "For integral input tensors, argument alpha must not be a floating point")
    _refuses(lambda: T.add(f, f, alpha=True), "Boolean alpha only supported for Boolean results")
    assert T.add(i, i, alpha=3).tolist() == [4, 8]
    assert T.add(b, b, alpha=2).tolist() == [True, False] and _dt(T.add(b, b, alpha=2)) == "bool"
    assert T.add(f, f, alpha=0.5).tolist() == [1.5, 3.0]


def _inplace_casts(T):
    i = _t(T, [1, 2], "int32")
    _refuses(lambda: i.add_(_t(T, [0.5, 0.5], "float32")), "can't be cast to the desired output type")
    _refuses(lambda: i.div_(_t(T, [2, 2], "int32")), "can't be cast to the desired output type")
    f = _t(T, [1.0, 2.0], "float32")
    assert f.add_(_t(T, [1, 1], "int64")).tolist() == [2.0, 3.0] and _dt(f) == "float32"
    u = _t(T, [250, 3], "uint8")
    assert u.add_(_t(T, [10, 1], "uint8")).tolist() == [4, 4]  # uint8 wraps around


def _integer_results(T):
    x = _t(T, [[1, 2], [3, 4]], "int32")
    assert _dt(T.sum(x)) == "int64" and _dt(T.sum(x, dtype=T.float64)) == "float64"
    assert _dt(T.exp(x)) == "float32" and _dt(T.sqrt(_t(T, [True], "bool"))) == "float32"
    assert _dt(T.neg(_t(T, [1, 2], "uint8"))) == "uint8" and T.neg(_t(T, [1, 2], "uint8")).tolist() == [255, 254]
    assert _dt(T.sign(_t(T, [True, False], "bool"))) == "bool"
    assert _dt(T.amax(_t(T, [True, False], "bool"))) == "bool"
    assert _dt(T.argmax(x)) == "int64"


def _out_dtypes(T):
    x = _t(T, [-1.0, 2.0], "float32")
    for op in ("neg", "abs", "sign"):  # relu too (torch: only aten's relu.out takes out=)
        for dtype in ("float64", "int64"):
            _refuses(lambda: getattr(T, op)(x, out=T.empty(0, dtype=getattr(T, dtype))), r"Found dtype \w+ but expected")
    _refuses(lambda: T.softmax(x, 0, dtype=T.int64), r"not implemented for '(Long|int64)'")
    assert _dt(T.exp(x, out=T.empty(0, dtype=T.float64))) == "float64"
    assert T.add(x, x, out=T.empty(0, dtype=T.float64)).tolist() == [-2.0, 4.0]


def _numbers_for_tensors(T):
    x = _t(T, [1.0, 3.0], "float32")
    for op in ("add", "sub", "mul", "div", "eq", "lt", "gt"):
        assert _dt(getattr(T, op)(x, 2)) in ("float32", "bool"), op
    assert T.where(_t(T, [True, False], "bool"), x, 0.0).tolist() == [1.0, 0.0]
    for op, arg in (("maximum", 2), ("mm", 2.0), ("matmul", 2), ("bmm", 1)):
        _refuses(lambda: getattr(T, op)(x, arg), r"must be Tensor|invalid combination of arguments", TypeError)


RULES = [
    Rule(("add", "mul", "maximum", "sub", "div"), "promotion: the higher of two dimensioned tensors' dtypes (bool < "
         "uint8 < int32 < int64 < float32 < float64); a 0-dim tensor counts only when of a higher category "
         "(bool < integer < float)", _promotion_pairs),
    Rule(("add", "sub", "mul", "div"), "Python numbers: an int keeps an integer tensor's dtype, a float gives "
         "float32 (the default float) for bool and integer tensors, a bool keeps any dtype", _python_scalars),
    Rule(("div",), "integer division is true division: bool and integer inputs give float32, x / 0 gives inf or "
         "nan, never an error", _true_division),
    Rule(("add", "mul", "sub", "neg", "sum"), "bool arithmetic: bool + bool and bool * bool stay bool (or, and); "
         "subtraction with any bool operand and negation of bool are refused; sum of bool counts in int64",
         _bool_arithmetic),
    Rule(("add", "sub"), "alpha: a float alpha with bool or integer inputs is refused; a bool alpha only for a bool "
         "result", _alpha),
    Rule(("add", "mul", "div"), "in-place: the result dtype must cast to self's (int32.add_(float32) and "
         "int32.div_(int32) are refused); integer results wrap around", _inplace_casts),
    Rule(("neg", "abs", "sign", "relu", "exp", "add", "softmax"), "out= and dtype=: the ops that keep their input's "
         "dtype write only into an out= of that dtype; the float functions and the binary ops cast into out=; "
         "softmax's dtype= must be a float", _out_dtypes),
    Rule(("add", "sub", "mul", "div", "eq", "lt", "gt", "maximum", "mm", "matmul", "bmm"), "a Python number "
         "stands for a tensor only in the arithmetic ops, the comparisons and where (torch's Scalar overloads); "
         "maximum, mm, matmul and bmm refuse one", _numbers_for_tensors),
    Rule(("sum", "exp", "sqrt", "neg", "sign", "amax", "argmax"), "integer results: sum of integers is int64 "
         "(dtype= overrides), float functions of integers give float32, neg of uint8 wraps, sign and amax of bool "
         "stay bool, argmax gives int64", _integer_results),
]


def coverage_rows() -> list[tuple[str, str, str]]:
    """(op, backend, declared cell) for the printed table."""
    rows = []
    for op in OPS:
        for backend in BACKENDS:
            ok = op.backend_dtypes(backend)
            cell = " ".join(ok) or "-"
            refused = [d for d in ALL if d not in ok]
            if refused:
                cell += "; refuses " + " ".join(refused)
            rows.append((op.name, backend, cell))
    return rows


if __name__ == "__main__":
    for name, backend, cell in coverage_rows():
        print(f"{name:8} {backend:5} {cell}")
    print()
    for rule in RULES:
        print(f"[{', '.join(rule.ops)}] {rule.text}")
