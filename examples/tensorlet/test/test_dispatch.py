"""Dispatcher behaviour: registrations, resolution order, the Tracing fallback,
Meta tensors, the missing-kernel error, and kernels from a C++ extension."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from tensorlet_gen.yaml_io import parse_derivatives, parse_ops

from conftest import ROOT, compile_extension, requires_build, tl

pytestmark = requires_build

OPS = parse_ops((ROOT / "ops.yaml").read_text()).entries
DIFFERENTIABLE = {str(d.name.name) for d in parse_derivatives((ROOT / "derivatives.yaml").read_text()).entries}


@pytest.mark.parametrize("nf", OPS, ids=lambda nf: str(nf.func.name))
def test_every_expected_kernel_is_registered(nf):
    name = f"tensorlet::{nf.func.name}"
    assert name in tl.ops.names()
    assert tl.ops.schema(name) == str(nf.func)
    registered = tl.ops.dispatch_table(name)["registered"]
    for key, kernel in nf.kernels.items():
        if key == "CUDA" and not tl.cuda.is_built():
            assert key not in registered
            continue
        assert registered.get(key) == kernel, (key, registered)
    has_autograd = str(nf.func.name) in DIFFERENTIABLE or nf.func.is_out
    assert ("Autograd" in registered) == has_autograd


def test_resolution_order():
    # backend kernel for CPU/Meta, nothing for CUDA without libtensorlet_cuda
    t = tl.ops.dispatch_table("exp")["table"]
    assert t["CPU"] == "exp_impl" and t["Meta"] == "exp_impl" and t["Autograd"] == "ExpBackward0"
    if not tl.cuda.is_built():
        assert t["CUDA"] == "missing"
    # CompositeExplicitAutograd fills every backend key
    v = tl.ops.dispatch_table("view")["table"]
    assert v["CPU"] == v["CUDA"] == v["Meta"] == "view_impl"
    # CompositeImplicitAutograd serves the backends and the Autograd key
    s = tl.ops.dispatch_table("matmul")["table"]
    assert s["CPU"] == s["CUDA"] == s["Autograd"] == "matmul_composite"
    # fallbacks
    assert t["Tracing"] == "trace_and_redispatch"
    assert tl.ops.dispatch_table("tensorlet::argmax")["table"]["Autograd"] == "autograd_not_differentiable"


def test_autograd_policy_lives_outside_the_dispatcher():
    """Issue 15: grad mode and version counters are the autograd layer's (the Autograd
    and ADInplaceOrView kernels); the dispatcher only routes."""
    import re

    found = []
    for path in sorted((ROOT / "csrc" / "dispatch").glob("*.*")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            if re.search(r"GradMode|bump_version|version\(\)|version_counter", code):
                found.append(f"{path.name}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
    assert tl.ops.dispatch_table("add_.Tensor")["table"]["ADInplaceOrView"] == "bump_written_versions"
    assert tl.ops.dispatch_table("exp")["table"]["ADInplaceOrView"] == "bump_written_versions"


def test_tracing_fallback_logs_top_level_calls():
    tl.ops.tracing_log()
    x = tl.ones(2, 3)
    tl.ops.set_tracing(True)
    try:
        y = (x + 1).sum(1)
        z = x.softmax(0)
    finally:
        tl.ops.set_tracing(False)
    log = tl.ops.tracing_log()
    assert log == [
        "tensorlet::add.Tensor(float32[2, 3], int64[], 1)",
        "tensorlet::sum.dim_IntList(float32[2, 3], [1], False, None)",
        "tensorlet::softmax.int(float32[2, 3], 0, None)",
    ]
    assert y.tolist() == [6.0, 6.0] and z.shape == (2, 3)
    (x * 2).sum()
    assert tl.ops.tracing_log() == []  # off again


def test_meta_tensors_compute_shapes_only():
    a = tl.empty(1000, 2000, device="meta")
    b = tl.empty(2000, 300, device="meta")
    assert a.data_ptr() == 0 and a.device.type == "meta"
    c = (a @ b + tl.empty(300, device="meta")).relu()
    assert c.shape == (1000, 300) and c.device == tl.device("meta")
    assert c.sum(0).shape == (300,) and c.amax(1, True).shape == (1000, 1)
    assert c.softmax(1).shape == (1000, 300)
    assert (tl.empty(2, 3, device="meta", dtype=tl.int32) / 2).dtype == tl.float32
    assert tl.zeros(5, device="meta").view(5, 1).expand(5, 4).shape == (5, 4)
    assert "size=(1000, 300)" in repr(c)
    with pytest.raises(RuntimeError, match="The size of tensor a"):
        tl.empty(2, 3, device="meta") + tl.empty(4, device="meta")


def test_missing_kernel_error():
    if tl.cuda.is_built():
        pytest.skip("libtensorlet_cuda is loaded")
    with pytest.raises(NotImplementedError, match="^no kernel for op tensorlet::empty on key CUDA$"):
        tl.empty(2, device="cuda")


def test_unknown_op_and_call_op():
    with pytest.raises(ValueError, match="unknown operator"):
        tl.ops.call("nope::nothing", 1)
    x = tl.tensor([1.0, 2.0])
    assert tl.ops.call("tensorlet::add.Tensor", x, x, alpha=3).tolist() == [4.0, 8.0]
    assert tl.ops.call("mul.Tensor", x, 2).tolist() == [2.0, 4.0]


EXTENSION_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[2])
    import tensorlet as tl
    x = tl.tensor([1.0, -2.0, 3.0])
    before = tl.sign(x).tolist()
    tl.ops.load_library(sys.argv[1])
    out = {
        "before": before,
        "scaled": tl.ops.call("myext::scale", x, 3.0).tolist(),
        "default": tl.ops.call("myext::scale", x).tolist(),
        "schema": tl.ops.schema("myext::scale"),
        "sign": tl.sign(x).tolist(),
        "table": tl.ops.dispatch_table("myext::scale")["table"],
    }
    try:
        tl.ops.call("myext::scale", tl.empty(2, device="meta"), 2.0)
    except NotImplementedError as e:
        out["meta_error"] = str(e)
    try:
        tl.ops.call("myext::scale", x.requires_grad_(), 2.0)
    except NotImplementedError as e:
        out["autograd_error"] = str(e)
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_kernels_from_a_cpp_extension(tmp_path):
    lib = compile_extension(ROOT / "test" / "extension" / "my_ops.cpp", tmp_path / "libmy_ops.so")
    script = tmp_path / "run.py"
    script.write_text(EXTENSION_SCRIPT)
    # A fresh interpreter: the override of tensorlet::sign must not leak into other tests.
    res = subprocess.run([sys.executable, str(script), str(lib), str(ROOT)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["before"] == [1.0, -1.0, 1.0]
    assert out["scaled"] == [3.0, -6.0, 9.0] and out["default"] == [2.0, -4.0, 6.0]
    assert out["schema"] == "scale(Tensor self, float factor=2.0) -> Tensor"
    assert out["sign"] == [7.0, 7.0, 7.0]  # the extension's kernel replaced the built-in one
    assert out["table"]["CPU"] == "scale_cpu"
    assert out["meta_error"] == "no kernel for op myext::scale on key Meta"
    assert "no derivative formula for op myext::scale" in out["autograd_error"]
