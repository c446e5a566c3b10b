"""An OpInfo-style table: every public op, the dtypes it supports, and a NumPy
reference. test_ops.py runs each entry over 0-dim, empty, broadcast and
non-contiguous inputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

ALL = ("bool", "uint8", "int32", "int64", "float32", "float64")
NUMERIC = ("uint8", "int32", "int64", "float32", "float64")
SIGNED = ("int32", "int64", "float32", "float64")
FLOATS = ("float32", "float64")


@dataclass
class OpInfo:
    name: str
    ref: Callable
    dtypes: tuple
    arity: int = 1                    # tensor inputs
    kind: str = "elementwise"         # elementwise | reduction | matmul
    promotes_to_float: bool = False   # integer inputs give float32 (exp, div...)
    bool_result: bool = False
    domain: Optional[tuple] = None    # (low, high) for sampled inputs
    kwargs: dict = field(default_factory=dict)
    has_out: bool = True


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np_relu(x):
    return np.where(x > 0, x, np.zeros_like(x))


def _np_sum_dtype(x, **kw):
    out = np.sum(x, **kw)
    return out.astype(np.int64) if x.dtype.kind in "biu" else out


OPS = [
    OpInfo("add", np.add, ALL, arity=2),
    OpInfo("sub", np.subtract, NUMERIC, arity=2),
    OpInfo("mul", np.multiply, ALL, arity=2),
    OpInfo("div", np.true_divide, NUMERIC, arity=2, promotes_to_float=True, domain=(1, 5)),
    OpInfo("maximum", np.maximum, ALL, arity=2),
    OpInfo("eq", np.equal, ALL, arity=2, bool_result=True),
    OpInfo("lt", np.less, ALL, arity=2, bool_result=True),
    OpInfo("gt", np.greater, ALL, arity=2, bool_result=True),
    OpInfo("neg", np.negative, SIGNED),
    OpInfo("exp", np.exp, NUMERIC, promotes_to_float=True, domain=(-3, 3)),
    OpInfo("log", np.log, NUMERIC, promotes_to_float=True, domain=(1, 9)),
    OpInfo("sqrt", np.sqrt, NUMERIC, promotes_to_float=True, domain=(0, 9)),
    OpInfo("abs", np.abs, SIGNED + ("uint8",)),
    OpInfo("relu", _np_relu, NUMERIC),
    OpInfo("sigmoid", _np_sigmoid, NUMERIC, promotes_to_float=True, domain=(-4, 4)),
    OpInfo("tanh", np.tanh, NUMERIC, promotes_to_float=True, domain=(-3, 3)),
    OpInfo("sign", np.sign, SIGNED),
    OpInfo("sum", _np_sum_dtype, ALL, kind="reduction", has_out=False),
    OpInfo("mean", np.mean, FLOATS, kind="reduction", has_out=False),
    OpInfo("amax", np.max, NUMERIC, kind="reduction", has_out=False),
    OpInfo("argmax", np.argmax, NUMERIC, kind="reduction", has_out=False),
    OpInfo("mm", np.matmul, NUMERIC, arity=2, kind="matmul"),
    OpInfo("matmul", np.matmul, NUMERIC, arity=2, kind="matmul", has_out=False),
    OpInfo("bmm", np.matmul, NUMERIC, arity=2, kind="bmm", has_out=False),
]


def sample(shape, dtype: str, rng: np.random.Generator, domain=None) -> np.ndarray:
    return np.asarray(_sample(shape, dtype, rng, domain))


def _sample(shape, dtype: str, rng: np.random.Generator, domain=None):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    lo, hi = domain or ((0, 10) if dtype == "uint8" else (-5, 5))
    if dtype in ("float32", "float64"):
        return rng.uniform(lo, hi, shape).astype(dtype)
    return rng.integers(max(lo, 0) if dtype == "uint8" else lo, hi, shape).astype(dtype)


ELEMENTWISE_SHAPES = [
    ("0-dim", (), ()),
    ("empty", (0, 3), (0, 3)),
    ("same", (3, 4), (3, 4)),
    ("broadcast-row", (3, 4), (4,)),
    ("broadcast-both", (3, 1), (1, 4)),
    ("broadcast-0dim", (2, 3), ()),
    ("large", (300, 257), (300, 257)),  # crosses the parallel grain size
]
