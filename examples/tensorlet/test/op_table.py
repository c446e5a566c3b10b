"""The op table: every operator overload of ops.yaml x every dtype tensorlet has x both
backends (cpu, cuda), each cell either supported or refused with the error class and a
regex of the message (one regex for tensorlet and torch).

It is derived, not copied:
- the rows are ops.yaml's overloads; `ARGS` says how to call each functional overload
  (keyed by its name), and an in-place or out= overload is called as its functional
  sibling (same name without `_`, same arguments without out=) plus self or out=. An
  overload of ops.yaml without a way to call it fails `test_op_table.py`, and so does a
  name in `ARGS` that ops.yaml no longer has;
- a dtype's refusal comes from opinfo.OPS (the refusals test_opinfo.py checks against
  NumPy) for the ops that table covers, from `REFUSED` here for the rest (factories,
  views, conversions), and from torch's in-place rule (a result dtype of a higher kind
  than self's cannot be cast into self: `int32.div_(int32)`);
- the cuda column is the cpu column where ops.yaml gives the overload a CUDA kernel or a
  composite one (CompositeExplicitAutograd, or no dispatch entry: written in other ops,
  so it runs on every backend), and the dispatcher's refusal otherwise.

A cell's operands all have the cell's dtype (where's condition stays bool); factories
take it as dtype=, conversions (to, _to_copy, copy_) convert from it to CONVERT_TO.
test_semantics.py's test_op_table_matches_torch runs every cell on tensorlet and torch
(`-m torch`); test_op_table.py checks the rows against ops.yaml and the dispatcher, and
every cell on tensorlet alone.

    PYTHONPATH=examples/tensorlet python examples/tensorlet/test/op_table.py    # prints the table
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from opinfo import ALL, FLOATS, NO_CUDA_KERNEL, NOT_FOR_BOOL, OPS_BY_NAME, SOFTMAX_INT, category, result_dtype, sample
from tensorlet_gen.yaml_io import ALIAS_KEYS, NativeFunction, parse_ops

ROOT = Path(__file__).resolve().parents[1]
NATIVE_FUNCTIONS: list[NativeFunction] = parse_ops((ROOT / "ops.yaml").read_text()).entries
BACKENDS = ("cpu", "cuda")
NOT_FOR_INTEGERS = SOFTMAX_INT  # "not implemented for 'Long'" (torch) or 'int64' (tensorlet)
INPLACE_CAST = r"result type \w+ can't be cast to the desired output type \w+"
# Conversions go from the cell's dtype to another kind (float64 <-> int32).
CONVERT_TO = {d: "float64" if d != "float64" else "int32" for d in ALL}


@dataclass(frozen=True)
class Refusal:
    pattern: str                      # a regex both libraries' messages match
    error: type = RuntimeError        # torch's class for a dtype it refuses


@dataclass(frozen=True)
class Dtype:
    """A dtype argument (dtype=): each library passes its own dtype object."""
    name: str


@dataclass(frozen=True)
class Out:
    """An out= tensor of this dtype, empty (the op resizes it)."""
    dtype: str


@dataclass(frozen=True)
class Args:
    args: tuple
    kwargs: dict


Builder = Callable[[str, np.random.Generator], Args]


def operands(*shapes: tuple, extra: tuple = (), domain: tuple | None = None, **kwargs: Any) -> Builder:
    """Tensors of the cell's dtype in these shapes, then `extra` positional values."""
    def build(dtype: str, rng: np.random.Generator) -> Args:
        arrays = tuple(sample(s, dtype, rng, domain) for s in shapes)
        if domain is None or domain[0] <= 0:
            arrays = tuple(with_negative_zero(a) for a in arrays)
        return Args(arrays + extra, dict(kwargs))
    return build


def with_negative_zero(array: np.ndarray) -> np.ndarray:
    """A float sample with -0.0 first: the sign of a zero result must be torch's
    (abs(-0.0) is 0.0)."""
    if array.dtype.kind == "f" and array.size > 1:
        array.flat[0] = -0.0
    return array


class OnDevice:
    """The device= of a factory: the backend's."""


def factory(*args: Any) -> Builder:
    return lambda dtype, rng: Args(args, {"dtype": Dtype(dtype), "device": OnDevice()})


def convert(shape: tuple, **kwargs: Any) -> Builder:
    return lambda dtype, rng: Args((sample(shape, dtype, rng),), {"dtype": Dtype(CONVERT_TO[dtype]), **kwargs})


def where(dtype: str, rng: np.random.Generator) -> Args:
    return Args((sample((3, 4), "bool", rng), sample((3, 4), dtype, rng), sample((4,), dtype, rng)), {})


def copy_into(dtype: str, rng: np.random.Generator) -> Args:
    return Args((sample((3, 4), CONVERT_TO[dtype], rng), sample((3, 4), dtype, rng)), {})


def domain(op: str) -> tuple | None:
    return OPS_BY_NAME[op].domain


# How to call each functional overload of ops.yaml (in-place and out= overloads follow
# their functional sibling). Shapes are small: the cells are many, the samples of
# test_opinfo.py cover the layouts.
ARGS: dict[str, Builder] = {
    "empty": factory([2, 3]), "zeros": factory([2, 3]), "ones": factory([2, 3]), "full": factory([2, 3], 1),
    "empty_like": operands((2, 3)), "zeros_like": operands((2, 3)), "ones_like": operands((2, 3)),
    "arange": factory(5), "arange.start_step": factory(1, 7, 2),
    "rand": factory([2, 3]), "randn": factory([2, 3]),
    "fill_.Scalar": operands((3, 4), extra=(1,)), "copy_": copy_into, "clone": operands((3, 4)),
    "_to_copy": convert((3, 4)), "to": convert((3, 4)), "contiguous": operands((3, 4)), "detach": operands((3, 4)),
    "view": operands((3, 4), extra=([4, 3],)), "reshape": operands((3, 4), extra=([2, 6],)),
    "permute": operands((3, 4), extra=([1, 0],)), "transpose.int": operands((3, 4), extra=(0, 1)),
    "t": operands((3, 4)), "expand": operands((3, 1), extra=([3, 4],)), "squeeze": operands((3, 1)),
    "squeeze.dim": operands((3, 1), extra=(1,)), "unsqueeze": operands((3, 4), extra=(0,)),
    "select.int": operands((3, 4), extra=(0, 1)), "slice.Tensor": operands((4, 3), extra=(0, 1, 3)),
    **{f"{op}.Tensor": operands((3, 4), (4,), domain=domain(op))
       for op in ("add", "sub", "mul", "div", "eq", "lt", "gt")},
    "maximum": operands((3, 4), (4,)), "where.self": where,
    **{op: operands((3, 4), domain=domain(op))
       for op in ("neg", "exp", "log", "sqrt", "abs", "relu", "sigmoid", "tanh", "sign")},
    "sum": operands((3, 4)), "sum.dim_IntList": operands((3, 4), extra=([1],)),
    "mean": operands((3, 4)), "mean.dim": operands((3, 4), extra=([1],)),
    "amax": operands((3, 4), extra=([1],)), "argmax": operands((3, 4), extra=(1,)),
    "mm": operands((3, 4), (4, 5), domain=(0, 3)), "bmm": operands((2, 3, 4), (2, 4, 5), domain=(0, 3)),
    "matmul": operands((3, 4), (4, 5), domain=(0, 3)),
    "softmax.int": operands((3, 4), extra=(1,)), "log_softmax.int": operands((3, 4), extra=(1,)),
}

# Refusals of the ops opinfo.OPS does not cover, by base name: dtype -> Refusal. torch:
# "arange_cpu" not implemented for 'Bool', "check_uniform_bounds" (rand) and "normal_kernel_cpu"
# (randn) not implemented for 'Long'; tensorlet names its own dtype.
REFUSED: dict[str, dict[str, Refusal]] = {
    "arange": {"bool": Refusal(NOT_FOR_BOOL)},
    **{op: {d: Refusal(NOT_FOR_INTEGERS) for d in ALL if d not in FLOATS} for op in ("rand", "randn")},
}
# Results that are not values: compared by dtype and shape only.
UNDETERMINED = {"empty", "empty_like", "rand", "randn"}


@dataclass(frozen=True)
class Row:
    """One overload of ops.yaml: how to call it, its cells on each backend."""
    native: NativeFunction
    functional: str          # the overload whose arguments it takes (itself when functional)
    variant: str             # functional | inplace | out | inplace-only (fill_, copy_: no functional sibling)

    @property
    def name(self) -> str:
        return str(self.native.func.name)

    @property
    def base(self) -> str:
        return self.native.func.name.name.rstrip("_")

    def has_kernel(self, backend: str) -> bool:
        kernels = self.native.kernels
        return backend.upper() in kernels or any(key in kernels for key in ALIAS_KEYS)

    def result_dtype(self, dtype: str) -> str:
        """The functional op's result dtype for operands of `dtype` (opinfo's rules)."""
        op = OPS_BY_NAME.get(self.base)
        if op is None or op.kind != "elementwise":
            return dtype
        return result_dtype(op, [dtype] * op.arity, [2] * op.arity)

    def refusal(self, dtype: str, backend: str) -> Refusal | None:
        """None where the cell is supported."""
        if not self.has_kernel(backend):
            return Refusal(NO_CUDA_KERNEL, NotImplementedError)
        op = OPS_BY_NAME.get(self.base)
        if op is not None and dtype in op.refused:
            return Refusal(op.refused[dtype])
        if op is not None and dtype not in op.backend_dtypes(backend):
            return Refusal(NO_CUDA_KERNEL, NotImplementedError)
        if dtype in REFUSED.get(self.base, {}):
            return REFUSED[self.base][dtype]
        if self.variant == "inplace" and category(self.result_dtype(dtype)) > category(dtype):
            return Refusal(INPLACE_CAST)
        return None

    def args(self, dtype: str) -> Args:
        built = ARGS[self.functional](dtype, np.random.default_rng(0))
        if self.variant == "out":
            return Args(built.args, {**built.kwargs, "out": Out(self.result_dtype(dtype))})
        return built


def functional_sibling(native: NativeFunction) -> str | None:
    """The functional overload an in-place or out= overload takes its arguments from."""
    schema = native.func
    inputs = [a.name for a in schema.arguments if a not in schema.out_arguments]
    for other in NATIVE_FUNCTIONS:
        s = other.func
        if s.name.name == schema.name.name.rstrip("_") and not (s.is_out or s.is_inplace) \
                and [a.name for a in s.arguments] == inputs:
            return str(s.name)
    return None


def rows() -> tuple[list[Row], list[str]]:
    """The table's rows, and the overloads of ops.yaml it has no way to call."""
    found, missing = [], []
    for native in NATIVE_FUNCTIONS:
        schema, name = native.func, str(native.func.name)
        sibling = functional_sibling(native) if schema.is_out or schema.is_inplace else None
        if name in ARGS:  # its own arguments (fill_ and copy_ have no functional sibling)
            found.append(Row(native, name, "functional" if not schema.is_inplace else "inplace-only"))
        elif sibling in ARGS:
            found.append(Row(native, sibling, "out" if schema.is_out else "inplace"))
        else:
            missing.append(name)
    return found, missing


ROWS, UNCALLABLE = rows()


def cells() -> list[tuple[Row, str, str, Refusal | None]]:
    return [(row, dtype, backend, row.refusal(dtype, backend)) for row in ROWS for dtype in ALL for backend in BACKENDS]


def materialize(value: Any, lib: Any, device: str) -> Any:
    """An argument for `lib` (tensorlet or torch): arrays become tensors on `device`."""
    if isinstance(value, np.ndarray):
        tensor = lib.from_numpy(value.copy())
        return tensor if device == "cpu" else tensor.to(device=device)
    if isinstance(value, Dtype):
        return getattr(lib, value.name)
    if isinstance(value, OnDevice):
        return device
    if isinstance(value, Out):
        return lib.empty([0], dtype=getattr(lib, value.dtype), device=device)
    return value


# torch's name for an overload whose aten overload name differs from tensorlet's.
TORCH_NAMES = {"empty": "empty.memory_format", "to": "to.dtype_layout"}
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


def unavailable(tl: Any, backend: str) -> str | None:
    """Why tensorlet cannot run `backend`'s column here, or None."""
    if backend == "cpu":
        return None
    if not tl.cuda.is_built():
        return "tensorlet was built without CUDA (USE_CUDA=OFF)"
    return None if tl.cuda.is_available() else "no CUDA device here"


def tensorlet_op(tl: Any, row: Row) -> Callable:
    """The overload through the dispatcher, by its ops.yaml name."""
    return lambda *args, **kwargs: tl.ops.call(row.name, *args, **kwargs)


def torch_op(torch: Any, row: Row) -> Callable:
    name, _, overload = TORCH_NAMES.get(row.name, row.name).partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")


def run_cell(lib: Any, op: Callable, row: Row, dtype: str, device: str) -> Any:
    """The op's result, or the exception it raised."""
    built = row.args(dtype)
    args = [materialize(a, lib, device) for a in built.args]
    kwargs = {k: materialize(v, lib, device) for k, v in built.kwargs.items()}
    try:
        return op(*args, **kwargs)
    except Exception as e:  # the cell's outcome: compared with the table and with torch
        return e


def refusal_problem(outcome: Any, refusal: Refusal) -> str | None:
    """Why `outcome` is not the refusal the table states, or None."""
    if not isinstance(outcome, Exception):
        return f"accepted; the table says refused ({refusal.pattern!r})"
    if not isinstance(outcome, refusal.error) or not re.search(refusal.pattern, str(outcome)):
        return f"refused with {type(outcome).__name__}: {outcome}; the table says {refusal.error.__name__} " \
               f"matching {refusal.pattern!r}"
    return None


def dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).rsplit(".", 1)[-1]


def host(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.cpu().contiguous().numpy())


def result_problem(got: Any, want: Any, row: Row) -> str | None:
    """How tensorlet's result `got` differs from torch's `want` (dtype, shape, values, the
    sign of zeros), or None."""
    if (dtype_name(got), tuple(got.shape)) != (dtype_name(want), tuple(want.shape)):
        return f"{dtype_name(got)}{list(got.shape)}, torch gives {dtype_name(want)}{list(want.shape)}"
    if row.base in UNDETERMINED:
        return None
    a, b = host(got), host(want)
    try:
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, equal_nan=True, **TOL[a.dtype.name])
            zeros = (a == 0) & (b == 0)
            np.testing.assert_array_equal(np.signbit(a[zeros]), np.signbit(b[zeros]), err_msg="the sign of zero")
        else:
            np.testing.assert_array_equal(a, b)
    except AssertionError as e:
        return str(e).strip()
    return None


if __name__ == "__main__":
    for row in ROWS:
        columns = []
        for backend in BACKENDS:
            refused = {d: r for d in ALL if (r := row.refusal(d, backend))}
            cell = " ".join(d for d in ALL if d not in refused) or "-"
            cell += "".join(f"; {d}: {r.error.__name__} /{r.pattern}/" for d, r in refused.items())
            columns.append(f"{backend}: {cell}")
        print(f"{row.name} ({row.variant}) " + ("cpu, cuda" + columns[0][3:] if columns[0][3:] == columns[1][4:]
                                                 else " | ".join(columns)))
