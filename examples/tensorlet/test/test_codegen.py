"""tensorlet_gen: schema and YAML round trips, determinism, write-if-changed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml
from tensorlet_gen.__main__ import generate
from tensorlet_gen.model import Argument, FunctionSchema, Type
from tensorlet_gen.yaml_io import emit_derivatives, emit_ops, parse_derivatives, parse_ops

from conftest import ROOT, tl

OPS_TEXT = (ROOT / "ops.yaml").read_text()
DERIV_TEXT = (ROOT / "derivatives.yaml").read_text()
SCHEMAS = [str(nf.func) for nf in parse_ops(OPS_TEXT).entries]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_schema_round_trip(schema):
    parsed = FunctionSchema.parse(schema)
    assert str(parsed) == schema
    assert FunctionSchema.parse(str(parsed)) == parsed


def test_schema_round_trip_matches_the_cpp_parser():
    if tl is None:
        pytest.skip("tensorlet._C is not built")
    for nf in parse_ops(OPS_TEXT).entries:
        assert tl.ops.schema(str(nf.func.name)) == str(nf.func)


def test_schema_model_details():
    s = FunctionSchema.parse("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert s.is_out and not s.is_inplace and [a.name for a in s.out_arguments] == ["out"]
    assert s.arguments[2] == Argument("alpha", Type("Scalar"), "1", None, True)
    assert s.returns[0].annotation.is_write
    s = FunctionSchema.parse("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
    assert s.arguments[1].type == Type("int", True, 1, True)
    assert FunctionSchema.parse("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)").is_inplace
    assert str(FunctionSchema.parse("f(Tensor a) -> (Tensor, Tensor)")) == "f(Tensor a) -> (Tensor, Tensor)"
    with pytest.raises(ValueError, match="canonical"):
        FunctionSchema.parse("add(Tensor self,Tensor other) -> Tensor")
    with pytest.raises(ValueError, match="unknown type"):
        FunctionSchema.parse("f(Tensorr a) -> Tensor")


@pytest.mark.parametrize("name,text,parse,emit", [
    ("ops.yaml", OPS_TEXT, parse_ops, emit_ops),
    ("derivatives.yaml", DERIV_TEXT, parse_derivatives, emit_derivatives),
])
def test_yaml_round_trip(name, text, parse, emit):
    emitted = emit(parse(text))
    assert emitted == text, f"{name} is not in canonical layout"
    assert yaml.safe_load(emitted) == yaml.safe_load(text)


def _snapshot(path):
    return {p.name: p.read_text() for p in sorted(path.iterdir())}


def test_generation_is_deterministic(tmp_path):
    generate(ROOT / "ops.yaml", ROOT / "derivatives.yaml", tmp_path / "a")
    generate(ROOT / "ops.yaml", ROOT / "derivatives.yaml", tmp_path / "b")
    assert _snapshot(tmp_path / "a") == _snapshot(tmp_path / "b")
    assert set(_snapshot(tmp_path / "a")) == {"Functions.h", "Functions.cpp", "NativeFunctions.h",
                                             "RegisterKernels.cpp", "RegisterCUDA.cpp", "AutogradKernels.cpp",
                                             "python_functions.cpp"}


def test_files_are_written_only_when_changed(tmp_path):
    out = tmp_path / "gen"
    first = generate(ROOT / "ops.yaml", ROOT / "derivatives.yaml", out)
    assert len(first.written) == 7
    stamp = {p: p.stat().st_mtime_ns for p in out.iterdir()}
    for p in out.iterdir():
        os.utime(p, ns=(1, 1))  # any rewrite would change this
    again = generate(ROOT / "ops.yaml", ROOT / "derivatives.yaml", out)
    assert again.written == [] and len(again.unchanged) == 7
    assert all(p.stat().st_mtime_ns == 1 for p in out.iterdir())
    (out / "Functions.h").write_text("stale")
    third = generate(ROOT / "ops.yaml", ROOT / "derivatives.yaml", out)
    assert [p.name for p in third.written] == ["Functions.h"]
    assert stamp  # silence unused


def test_missing_derivative_entry_is_an_error(tmp_path):
    ops = tmp_path / "ops.yaml"
    ops.write_text(OPS_TEXT + "\n- func: cube(Tensor self) -> Tensor\n  variants: function\n  dispatch:\n    CPU: cube_impl\n")
    with pytest.raises(ValueError, match="no entry for: cube"):
        generate(ops, ROOT / "derivatives.yaml", tmp_path / "out")


def test_command_line_entry_point(tmp_path):
    res = subprocess.run([sys.executable, "-m", "tensorlet_gen", "--ops", "ops.yaml", "--derivatives",
                          "derivatives.yaml", "--out", str(tmp_path / "g")], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "7 written" in res.stdout
    assert not (ROOT / "csrc" / "generated").exists()  # generated code never lands in the source tree


def test_generated_code_covers_every_op(tmp_path):
    generate(ROOT / "ops.yaml", ROOT / "derivatives.yaml", tmp_path)
    reg = (tmp_path / "RegisterKernels.cpp").read_text()
    py = (tmp_path / "python_functions.cpp").read_text()
    for nf in parse_ops(OPS_TEXT).entries:
        assert f'm.def("{nf.func}");' in reg
        assert f'"{nf.func}"' in py
