"""gradcheck for every differentiable op in derivatives.yaml (an entry without a
sample below fails), plus broadcasting, version counters and grad modes."""

from __future__ import annotations

import numpy as np
import pytest
from tensorlet_gen.yaml_io import parse_derivatives, parse_ops

from conftest import ROOT, requires_build, tl

pytestmark = requires_build

DERIVATIVES = parse_derivatives((ROOT / "derivatives.yaml").read_text()).entries
OPS = parse_ops((ROOT / "ops.yaml").read_text()).entries


def leaf(*shape, low=-1.0, high=1.0, seed=0):
    rng = np.random.default_rng(seed + len(shape))
    return tl.from_numpy(rng.uniform(low, high, shape)).requires_grad_(True)


def const(*shape, seed=7):
    return tl.from_numpy(np.random.default_rng(seed).uniform(0.5, 1.5, shape))


# op overload -> (function of the inputs, inputs). Broadcasting shapes on purpose.
SAMPLES = {
    "fill_.Scalar": lambda: (lambda x: (x * 1).fill_(2.0) * x, [leaf(3)]),
    "copy_": lambda: (lambda x, y: (x * 1).copy_(y) * x, [leaf(2, 3), leaf(3)]),
    "clone": lambda: (lambda x: x.clone() * 2, [leaf(2, 3)]),
    "_to_copy": lambda: (lambda x: tl._to_copy(x, dtype=tl.float64) * x, [leaf(3)]),
    "view": lambda: (lambda x: x.view(3, 2), [leaf(2, 3)]),
    "permute": lambda: (lambda x: x.permute(2, 0, 1), [leaf(2, 3, 4)]),
    "transpose.int": lambda: (lambda x: x.transpose(0, 1), [leaf(2, 3)]),
    "expand": lambda: (lambda x: x.expand(4, 3), [leaf(1, 3)]),
    "squeeze": lambda: (lambda x: x.squeeze(), [leaf(1, 3, 1)]),
    "squeeze.dim": lambda: (lambda x: x.squeeze(0), [leaf(1, 3)]),
    "unsqueeze": lambda: (lambda x: x.unsqueeze(1), [leaf(3)]),
    "select.int": lambda: (lambda x: x.select(1, -1), [leaf(2, 3)]),
    "slice.Tensor": lambda: (lambda x: tl.slice(x, 1, 1, None, 2), [leaf(2, 5)]),
    "add.Tensor": lambda: (lambda x, y: tl.add(x, y, alpha=2.5), [leaf(2, 3), leaf(3)]),
    "add_.Tensor": lambda: (lambda x, y: (x * 1).add_(y, alpha=-1.5), [leaf(2, 3), leaf(1, 3)]),
    "sub.Tensor": lambda: (lambda x, y: tl.sub(x, y, alpha=3), [leaf(2, 1), leaf(3)]),
    "sub_.Tensor": lambda: (lambda x, y: (x * 1).sub_(y, alpha=0.5), [leaf(2, 3), leaf(3)]),
    "mul.Tensor": lambda: (lambda x, y: x * y, [leaf(2, 3), leaf(2, 1)]),
    "mul_.Tensor": lambda: (lambda x, y: (x * 1).mul_(y), [leaf(2, 3), leaf(3)]),
    "div.Tensor": lambda: (lambda x, y: x / y, [leaf(2, 3), leaf(3, low=1, high=2)]),
    "div_.Tensor": lambda: (lambda x, y: (x * 1).div_(y), [leaf(2, 3), leaf(3, low=1, high=2)]),
    "maximum": lambda: (lambda x, y: tl.maximum(x, y), [leaf(2, 3), leaf(3, seed=3)]),
    "where.self": lambda: (lambda x, y: tl.where(const(2, 3) > 1.0, x, y), [leaf(2, 3), leaf(3)]),
    "neg": lambda: (lambda x: -x, [leaf(3)]),
    "exp": lambda: (lambda x: x.exp(), [leaf(3)]),
    "log": lambda: (lambda x: x.log(), [leaf(3, low=0.5, high=2)]),
    "sqrt": lambda: (lambda x: x.sqrt(), [leaf(3, low=0.5, high=2)]),
    "abs": lambda: (lambda x: x.abs(), [leaf(4)]),
    "relu": lambda: (lambda x: x.relu(), [leaf(4)]),
    "sigmoid": lambda: (lambda x: x.sigmoid(), [leaf(3)]),
    "tanh": lambda: (lambda x: x.tanh(), [leaf(3)]),
    "sign": lambda: (lambda x: x.sign() * x, [leaf(3)]),
    # dim 0 of a 3 x 4 input: not the last dim, so the transposed path of the kernel.
    "softmax.int": lambda: (lambda x: x.softmax(1) + x.softmax(0), [leaf(3, 4)]),
    "log_softmax.int": lambda: (lambda x: tl.log_softmax(x, 0) + x.log_softmax(-1), [leaf(3, 4)]),
    "sum.dim_IntList": lambda: (lambda x: x.sum(1) + x.sum((0, 2), True).sum() + x.sum(), [leaf(2, 3, 4)]),
    "mean.dim": lambda: (lambda x: x.mean(0) + x.mean((1,), True).sum(), [leaf(2, 3)]),
    "amax": lambda: (lambda x: x.amax(1) + x.amax(), [leaf(3, 4)]),
    "mm": lambda: (lambda x, y: x @ y, [leaf(2, 3), leaf(3, 4)]),
    "bmm": lambda: (lambda x, y: tl.bmm(x, y), [leaf(2, 2, 3), leaf(2, 3, 2)]),
}

# Composite ops get gradients from their decomposition; check them too.
COMPOSITE_SAMPLES = {
    "matmul": lambda: (lambda x, y: x @ y, [leaf(2, 1, 2, 3), leaf(4, 3, 2)]),
    "reshape": lambda: (lambda x: x.permute(1, 0).reshape(-1), [leaf(2, 3)]),
    "mean": lambda: (lambda x: x.mean(), [leaf(2, 3)]),
    "t": lambda: (lambda x: x.t(), [leaf(2, 3)]),
    "indexing": lambda: (lambda x: x[1:, None, 0], [leaf(3, 4)]),
}


def differentiable_entries():
    return [str(d.name.name) for d in DERIVATIVES if d.differentiable]


def test_every_differentiable_op_has_a_sample():
    missing = sorted(set(differentiable_entries()) - set(SAMPLES))
    assert not missing, f"add gradcheck samples for: {missing}"


def test_every_kernel_op_has_a_derivatives_entry():
    have = {str(d.name.name) for d in DERIVATIVES}
    need = [str(nf.func.name) for nf in OPS
            if not nf.is_composite_implicit and not nf.func.is_out and nf.func.tensor_arguments]
    assert sorted(set(need) - have) == []


@pytest.mark.parametrize("name", differentiable_entries())
def test_gradcheck(name):
    fn, inputs = SAMPLES[name]()
    assert tl.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", sorted(COMPOSITE_SAMPLES))
def test_gradcheck_composites(name):
    fn, inputs = COMPOSITE_SAMPLES[name]()
    assert tl.autograd.gradcheck(fn, inputs)


def test_gradcheck_catches_wrong_gradients():
    x = leaf(3)
    with pytest.raises(tl.autograd.GradcheckError, match="Jacobian mismatch"):
        # detach() hides a dependency from autograd, so the analytical gradient is wrong
        tl.autograd.gradcheck(lambda v: v * v.detach() * v.detach(), [x])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum"])
def test_broadcast_gradients_are_summed_to_input_shapes(op):
    a, b = leaf(4, 1, 3), leaf(2, 1, low=1, high=2)
    getattr(tl, op)(a, b).sum().backward()
    assert a.grad.shape == (4, 1, 3) and b.grad.shape == (2, 1)


def test_backward_accumulates_and_grad_mode():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0, 8.0]
    with tl.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None
    with tl.no_grad():
        with tl.enable_grad():
            assert (x * 2).requires_grad
    assert tl.is_grad_enabled()

    @tl.no_grad()
    def f(v):
        return v * 3
    assert not f(x).requires_grad
    with tl.set_grad_enabled(False):
        assert not (x + 1).requires_grad


def test_integer_and_detached_outputs_do_not_require_grad():
    x = leaf(3)
    assert not x.argmax().requires_grad
    assert not (x > 0).requires_grad
    assert not x.detach().requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 2]).requires_grad_()


def test_version_counter_detects_inplace_modification():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b.sigmoid()          # saves its result
    v = c._version
    c.mul_(3)                # ... which is then overwritten
    assert c._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_version_counter_is_shared_with_views():
    w = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = tl.tensor([1.0, 1.0, 1.0])
    y = (w * x).sum()        # saves x
    x[0:2].add_(1)           # in-place through a view bumps x's version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_writes_bump_versions_once_and_internal_writes_not_at_all():
    """The ADInplaceOrView kernel bumps every written argument once per call, with or
    without grad, and hides its key from the kernels' own calls (zeros' fill_, clone's
    copy_, mean's div_) so fresh results start at version 0."""
    x = tl.ones(3)
    assert x._version == 0 and x.clone()._version == 0 and tl.full([2], 1.5)._version == 0
    assert x.mean()._version == 0 and x.to(tl.float64)._version == 0
    x.add_(1)
    assert x._version == 1
    tl.mul(x, x, out=x)                       # out= writes too
    assert x._version == 2
    view = x[1:]
    view.fill_(0.5)                           # through a view: the shared counter
    assert x._version == view._version == 3
    out = tl.empty(2)
    assert tl.add(tl.ones(2), tl.ones(2), out=out) is out and out._version == 1
    grad_input = tl.tensor([1.0, 2.0], requires_grad=True)
    y = grad_input * 1
    y.mul_(2)                                 # in-place below the Autograd kernel: one bump
    assert y._version == 1


def test_out_write_to_a_saved_tensor_is_detected():
    w = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = tl.tensor([1.0, 1.0, 1.0])
    y = (w * x).sum()                         # saves x
    tl.add(x, x, out=x)                       # an out= write, no grad involved: still a bump
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_inplace_rules():
    leaf_t = tl.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf_t.add_(1)
    with tl.no_grad():
        leaf_t.add_(1)       # allowed without grad recording (an optimizer step)
    assert leaf_t.tolist() == [2.0]
    x = leaf(3)
    y = x * 1
    y.mul_(tl.tensor([2.0, 3.0, 4.0], dtype=tl.float64))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 3.0, 4.0])


def test_backward_twice_and_retain_graph():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        tl.tensor([1.0]).backward()


def test_out_variants_refuse_autograd():
    x = tl.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        tl.add(x, x, out=tl.empty(1))


def test_gradient_dtype_matches_input():
    a = tl.tensor([1.0, 2.0], dtype=tl.float32, requires_grad=True)
    b = tl.tensor([3.0, 4.0], dtype=tl.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == tl.float32 and b.grad.dtype == tl.float64
