"""python -m tensorlet_gen --ops ops.yaml --derivatives derivatives.yaml --out <dir>"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .gen_autograd import gen_autograd
from .gen_python import gen_python
from .gen_registrations import CORE_KEYS, gen_functions, gen_native_functions_h, gen_register
from .utils import BANNER, FileWriter
from .yaml_io import parse_derivatives, parse_ops


def generate(ops_path: Path, derivatives_path: Path, out_dir: Path) -> FileWriter:
    ops = parse_ops(Path(ops_path).read_text(encoding="utf-8")).entries
    derivatives = parse_derivatives(Path(derivatives_path).read_text(encoding="utf-8")).entries
    banner = BANNER.format(sources=f"{Path(ops_path).name} and {Path(derivatives_path).name}")
    writer = FileWriter(out_dir)
    functions_h, functions_cpp = gen_functions(ops, banner)
    writer.write("Functions.h", functions_h)
    writer.write("Functions.cpp", functions_cpp)
    writer.write("NativeFunctions.h", gen_native_functions_h(ops, banner))
    writer.write("RegisterKernels.cpp", gen_register(ops, CORE_KEYS, banner, with_defs=True))
    writer.write("RegisterCUDA.cpp", gen_register(ops, ("CUDA",), banner, with_defs=False))
    writer.write("AutogradKernels.cpp", gen_autograd(ops, derivatives, banner))
    writer.write("python_functions.cpp", gen_python(ops, banner))
    return writer


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tensorlet_gen", description=__doc__)
    p.add_argument("--ops", required=True, type=Path)
    p.add_argument("--derivatives", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    try:
        w = generate(a.ops, a.derivatives, a.out)
    except ValueError as e:
        print(f"tensorlet_gen: error: {e}", file=sys.stderr)
        return 1
    if not a.quiet:
        print(f"tensorlet_gen: {len(w.written)} written, {len(w.unchanged)} unchanged in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
