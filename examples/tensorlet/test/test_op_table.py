"""The op table (op_table.py) against its sources: a row for every overload of ops.yaml
and nothing else, opinfo.OPS's backends as ops.yaml registers them, the dispatcher's
registered kernels as the table's cpu (and, in a CUDA build, cuda) column, and every
cell on tensorlet alone. test_semantics.py checks the cells against torch (`-m torch`);
test_cuda.py checks the cuda column on the session's CUDA build."""

from __future__ import annotations

import re

import op_table
import pytest
from op_table import ARGS, BACKENDS, NATIVE_FUNCTIONS, REFUSED, ROWS, UNCALLABLE
from opinfo import ALL, OPS

from conftest import ROOT, requires_build, tl

OVERLOADS = [str(nf.func.name) for nf in NATIVE_FUNCTIONS]


def test_a_row_for_every_overload_of_ops_yaml():
    """An op added to ops.yaml without a way to call it (ARGS, or a functional sibling
    for in-place and out=) fails here; so do names ops.yaml no longer has."""
    assert not UNCALLABLE, f"ops.yaml overloads with no row in op_table.ARGS: {UNCALLABLE}"
    assert [row.name for row in ROWS] == OVERLOADS
    assert not set(ARGS) - set(OVERLOADS), f"op_table.ARGS names no overload of ops.yaml: {set(ARGS) - set(OVERLOADS)}"
    bases = {row.base for row in ROWS}
    assert not set(REFUSED) - bases and not {op.name for op in OPS} - bases
    assert len(op_table.cells()) == len(OVERLOADS) * len(ALL) * len(BACKENDS)


def test_the_dtypes_are_tensorlets():
    """The table's dtype columns are every ScalarType tensorlet has (core/ScalarType.h)."""
    header = (ROOT / "csrc" / "core" / "ScalarType.h").read_text()
    macro = header.split("#define TENSORLET_FORALL_SCALAR_TYPES(_)")[1].split("\n\n")[0]
    assert re.findall(r"_\(\w+, \w+, (\w+)\)", macro) == list(ALL)


def test_opinfo_backends_are_ops_yaml_registrations():
    """opinfo.OPS's cuda dtypes and cuda_out say what ops.yaml registers for CUDA."""
    for op in OPS:
        rows = [row for row in ROWS if row.base == op.name]
        on_cuda = all(row.has_kernel("cuda") for row in rows if row.variant != "out")
        assert (set(op.cuda) == set(op.dtypes)) == on_cuda, op.name
        outs = [row for row in rows if row.variant == "out"]
        assert op.has_out == bool(outs), op.name
        assert not outs or op.cuda_out == all(row.has_kernel("cuda") for row in outs), op.name


def registered_backends(table: dict) -> set[str]:
    """The backends an op runs on, from tensorlet.ops.dispatch_table's registered keys."""
    keys = set(table["registered"])
    if keys & {"CompositeExplicitAutograd", "CompositeImplicitAutograd"}:
        return set(BACKENDS)
    return {backend for backend in BACKENDS if backend.upper() in keys}


@requires_build
def test_the_dispatcher_registers_the_tables_kernels():
    """The in-place build's operators are the table's rows, each with the table's cpu
    kernel; in a CUDA build (libtensorlet_cuda loaded, no GPU needed) the cuda column too."""
    names = sorted(n.removeprefix("tensorlet::") for n in tl.ops.names() if n.startswith("tensorlet::"))
    assert names == sorted(OVERLOADS)
    checked = BACKENDS if tl.cuda.is_built() else ("cpu",)
    for row in ROWS:
        backends = registered_backends(tl.ops.dispatch_table(row.name)) & set(checked)
        assert backends == {b for b in checked if row.has_kernel(b)}, row.name


@requires_build
@pytest.mark.parametrize("backend", BACKENDS)
def test_tensorlet_follows_the_table(backend):
    """Every cell on tensorlet alone: a supported one runs, a refused one raises the
    table's error (the comparison with torch is test_semantics.py's, `-m torch`)."""
    if reason := op_table.unavailable(tl, backend):
        pytest.skip(f"{backend} column: {reason}")
    problems = []
    for row in ROWS:
        for dtype in ALL:
            outcome = op_table.run_cell(tl, op_table.tensorlet_op(tl, row), row, dtype, backend)
            refusal = row.refusal(dtype, backend)
            problem = op_table.refusal_problem(outcome, refusal) if refusal else \
                (f"refused: {outcome!r}" if isinstance(outcome, Exception) else None)
            if problem:
                problems.append(f"{row.name} {dtype}: {problem}")
    assert not problems, "\n".join(problems)
