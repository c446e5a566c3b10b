"""The semantics rules of opinfo.RULES (type promotion, integer division, bool
arithmetic, alpha, in-place casts, integer results) and the dtypes each op
refuses: checked on tensorlet, and on torch where it is installed, so that the
table states torch's behaviour and tensorlet follows it (torch is a reference
here only, never a dependency). test_op_table_matches_torch (`-m torch`) walks
op_table.py's whole table (every overload of ops.yaml x dtype) on tensorlet and torch."""

from __future__ import annotations

import importlib.util

import numpy as np
import op_table
import pytest
from opinfo import ALL, OPS, RULES, Rule, sample

from conftest import requires_build, tl

HAVE_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed: the table is checked on tensorlet "
                                                        "alone (pip install torch to check it against torch)")


def _torch():
    import torch

    torch.set_num_threads(1)
    return torch


@requires_build
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.check.__name__.strip("_"))
def test_rule_holds_for_tensorlet(rule: Rule):
    rule.check(tl)


@needs_torch
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.check.__name__.strip("_"))
def test_rule_holds_for_torch(rule: Rule):
    rule.check(_torch())


@needs_torch
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_table_matches_torch(op):
    """torch accepts each dtype the table lists, with the table's result dtype and the
    reference's values, and refuses the others with the table's error."""
    import re

    from test_opinfo import expected_dtype, reference

    torch = _torch()
    rng = np.random.default_rng(0)
    from opinfo import samples

    for dtype in op.dtypes:
        s = next(x for x in samples(op, dtype, rng) if min(a.size for a in x.arrays) > 0)
        got = getattr(torch, op.name)(*[torch.from_numpy(a.copy()) for a in s.arrays], *s.args)
        want_dtype = expected_dtype(op, s, dtype)
        assert str(got.dtype) == f"torch.{want_dtype}", (dtype, got.dtype)
        ref = reference(op, s, want_dtype)
        np.testing.assert_allclose(got.numpy().astype(np.float64), ref.astype(want_dtype).astype(np.float64),
                                   rtol=1e-4, atol=1e-4 * max(1, s.arrays[0].shape[-1] if s.arrays[0].ndim else 1))
    for dtype, pattern in op.refused.items():
        arrays = [sample((2, 2, 2) if op.kind == "bmm" else (2, 2), dtype, rng) for _ in range(op.arity)]
        with pytest.raises(RuntimeError) as info:  # tensorlet's class too (test_opinfo.refuses)
            getattr(torch, op.name)(*[torch.from_numpy(a) for a in arrays], *((0,) if op.kind == "softmax" else ()))
        assert re.search(pattern, str(info.value)), str(info.value)


# Cells where tensorlet knowingly differs from torch: (overload, dtype, backend) -> why.
# Each must still differ (a fixed one fails until it is taken out); none is skipped.
KNOWN_DIFFERENCES: dict[tuple[str, str, str], str] = {}


def table_problems(torch, backend: str) -> tuple[list[str], set]:
    """Every cell of op_table on `backend`: tensorlet's outcome against the table and
    against torch's on the CPU (both accept, with the same dtype, shape and values, or
    both refuse with the table's error). The problems, and the known differences seen."""
    problems, differing = [], set()
    for row in op_table.ROWS:
        for dtype in ALL:
            key = (row.name, dtype, backend)
            ours = op_table.run_cell(tl, op_table.tensorlet_op(tl, row), row, dtype, backend)
            theirs = op_table.run_cell(torch, op_table.torch_op(torch, row), row, dtype, "cpu")
            refusal = row.refusal(dtype, backend)
            if refusal and refusal.pattern == op_table.NO_CUDA_KERNEL:  # no kernel here: torch's CPU is no guide
                found = [op_table.refusal_problem(ours, refusal)]
            elif refusal:
                found = [op_table.refusal_problem(ours, refusal),
                         (p := op_table.refusal_problem(theirs, refusal)) and f"torch {p}"]
            elif isinstance(ours, Exception) or isinstance(theirs, Exception):
                found = [f"tensorlet: {ours!r}, torch: {theirs!r}; the table says supported"]
            else:
                found = [op_table.result_problem(ours, theirs, row)]
            found = [p for p in found if p]
            if found and key in KNOWN_DIFFERENCES:
                differing.add(key)
            elif found:
                problems += [f"{row.name} {dtype} {backend}: {p}" for p in found]
    return problems, differing


@needs_torch
@requires_build
@pytest.mark.torch
@pytest.mark.parametrize("backend", op_table.BACKENDS)
def test_op_table_matches_torch(backend):
    """The op table (op_table.py: every overload of ops.yaml x dtype), cell by cell on
    tensorlet and torch. The cuda column runs where tensorlet has a CUDA device."""
    if reason := op_table.unavailable(tl, backend):
        pytest.skip(f"{backend} column: {reason}")
    problems, differing = table_problems(_torch(), backend)
    listed = {key for key in KNOWN_DIFFERENCES if key[2] == backend}
    problems += [f"{key}: listed in KNOWN_DIFFERENCES ({KNOWN_DIFFERENCES[key]}) but agrees with torch now"
                 for key in sorted(listed - differing)]
    assert not problems, f"{len(problems)} cells differ from the table or torch:\n" + "\n".join(problems)
