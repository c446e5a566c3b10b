"""The semantics rules of opinfo.RULES (type promotion, integer division, bool
arithmetic, alpha, in-place casts, integer results) and the dtypes each op
refuses: checked on tensorlet, and on torch where it is installed, so that the
table states torch's behaviour and tensorlet follows it (torch is a reference
here only, never a dependency)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from opinfo import OPS, RULES, Rule, sample

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
