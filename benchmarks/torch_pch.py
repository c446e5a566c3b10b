"""The edit loop of a torch extension's C++ file: buildkit with precompiled torch headers
against torch.utils.cpp_extension's fastest path, and against buildkit without them.

An extension-cpp-sized project is generated: one extension module of four .cpp files,
each including <torch/extension.h> (three ops and the pybind11 bindings).  Three copies
are built in place, compiler caches off on every side:

    cpp_extension:  python setup.py build_ext --inplace   (CppExtension, BuildExtension, ninja)
    buildkit:       python -m buildkit develop .          (precompiled torch headers, the default)
    buildkit, PCH off: the same with BUILDKIT_TORCH_PCH=0

Then one token of one op's .cpp is changed (a constant, 1.0 to 2.0 and back) before each
timed rebuild; the module is imported and checked after the runs.  Printed: cold build
and one-token edit, each as a ratio to cpp_extension's figure of the same run, once for
each C++ compiler given with --cxx (each side compiles with it: CXX for both), default
$CXX or c++:

    python benchmarks/torch_pch.py --python VENV/bin/python --runs 3 --cxx g++ --cxx clang++-19

GCC's precompiled header keeps torch's headers parsed; clang's (CMake compiles it with
-fpch-instantiate-templates) also keeps the template instantiations they ask for, which
GCC makes again in every source: the edit's figure differs by compiler for that reason.

The interpreter needs torch, setuptools, ninja and buildkit; without torch the script
says so and exits 0.  Not run by the tests or CI (tests/test_torch_pch.py and the
torch-marked tests/test_torch_extension.py test the feature).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from buildkit_testing.benchmark_project import BUILDKIT_BACKEND, pyproject_toml
from buildkit_testing.timing import median, timed, token_flip
from buildkit_testing.torch_bench import start

OPS = 3
OP = """\
#include <torch/extension.h>
#include "ops.h"

namespace {{
constexpr double kScale = 1.0;  // the token the benchmark edits
}}

torch::Tensor op{i}(const torch::Tensor& x) {{
  auto y = x.to(torch::kFloat64);
  return (y * kScale + {i}).sin().cos() + torch::zeros_like(y).add_(static_cast<double>({i}));
}}
"""
BINDINGS = """\
#include <torch/extension.h>
#include "ops.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{
{defs}
}}
"""
CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project(pchbench LANGUAGES CXX)
include(BuildkitTorch)
buildkit_torch_extension(pchbench_C MODULE NAME _C SOURCES {sources})
install(TARGETS pchbench_C LIBRARY DESTINATION pchbench)
"""
SETUP_PY = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(name="pchbench", version="0.1.0", package_dir={{"": "src"}}, packages=["pchbench"],
      ext_modules=[CppExtension("pchbench._C", {sources})], cmdclass={{"build_ext": BuildExtension}})
"""
BUILDKIT_PYPROJECT = pyproject_toml("pchbench", BUILDKIT_BACKEND, 'version = "0.1.0"\nrequires-python = ">=3.11"',
                                    '[tool.buildkit]\ninstall-prefix = "wheel-root"', requires=("torch",))
CHECK = ("import torch, pchbench._C as m; x = torch.arange(3.); "
         "assert torch.allclose(m.op0(x), (x + 0).sin().cos().double()), m.op0(x)")
SOURCES = [f"csrc/op{i}.cpp" for i in range(OPS)] + ["csrc/bindings.cpp"]
EDIT = ("kScale = 1.0", "kScale = 2.0")  # and back: a real one-token change of the object each time


def write_project(root: Path, tool: str) -> Path:
    (root / "csrc").mkdir(parents=True)
    (root / "src" / "pchbench").mkdir(parents=True)
    (root / "src" / "pchbench" / "__init__.py").write_text("")
    (root / "csrc" / "ops.h").write_text("#pragma once\n" + "".join(
        f"torch::Tensor op{i}(const torch::Tensor& x);\n" for i in range(OPS)))
    for i in range(OPS):
        (root / "csrc" / f"op{i}.cpp").write_text(OP.format(i=i))
    defs = "\n".join(f'  m.def("op{i}", &op{i});' for i in range(OPS))
    (root / "csrc" / "bindings.cpp").write_text(BINDINGS.format(defs=defs))
    if tool == "cpp_extension":
        (root / "setup.py").write_text(SETUP_PY.format(sources=SOURCES))
    else:
        (root / "CMakeLists.txt").write_text(CMAKELISTS.format(sources=" ".join(SOURCES)))
        (root / "pyproject.toml").write_text(BUILDKIT_PYPROJECT)
    return root


def compiler_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cxx", action="append", default=None,
                        help="a C++ compiler to measure with, on every side (repeat for several; "
                             "default $CXX or c++)")


def compiler_version(cxx: str) -> str:
    """The compiler's first version line, or why there is none."""
    try:
        shown = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(f"benchmarks/torch_pch.py: the C++ compiler {cxx!r} does not run: {error}") from None
    return shown.splitlines()[0] if shown else cxx


def measure(args: argparse.Namespace, env: dict[str, str], work: Path) -> dict[str, dict[str, float]]:
    """The two rows, each side's median, for one compiler (``env``'s CXX)."""
    sides = {
        "cpp_extension": (["setup.py", "build_ext", "--inplace"], env),
        "buildkit": (["-m", "buildkit", "develop", "."], env),
        "buildkit, PCH off": (["-m", "buildkit", "develop", "."], {**env, "BUILDKIT_TORCH_PCH": "0"}),
    }
    rows: dict[str, dict[str, float]] = {"cold build": {}, "one-token edit of one .cpp": {}}
    roots = {side: write_project(work / f"p{n}", side) for n, side in enumerate(sides)}
    for side, (command, side_env) in sides.items():
        rows["cold build"][side] = timed([args.python, *command], roots[side], side_env)
    for side, (command, side_env) in sides.items():
        rows["one-token edit of one .cpp"][side] = median(
            [args.python, *command], roots[side], side_env, args.runs,
            before=token_flip(roots[side] / "csrc" / "op1.cpp", EDIT))
        timed([args.python, "-c", CHECK], roots[side] / "src", side_env)  # what was built works
    return rows


def main(argv: list[str] | None = None) -> int:
    bench = start(__doc__, 3, argv, "buildkit-pch-bench-", compiler_options)
    if bench is None:
        return 0
    args, version, env, work = bench.args, bench.torch, bench.env, bench.work
    compilers = args.cxx or [env.get("CXX", "c++")]
    results: dict[str, dict[str, dict[str, float]]] = {}
    try:
        for n, cxx in enumerate(compilers):
            named = compiler_version(cxx)
            print(f"benchmarks/torch_pch.py: measuring with {cxx} ({named})", flush=True)
            results[f"{cxx} ({named})"] = measure(args, {**env, "CXX": cxx}, work / f"c{n}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nbenchmarks/torch_pch.py: torch {version}, {OPS + 1} .cpp files, median of {args.runs} "
          f"runs (cold: one), Python {sys.version.split()[0]}, {os.cpu_count()} cores, compiler caches off")
    sides = ("cpp_extension", "buildkit", "buildkit, PCH off")
    for compiler, rows in results.items():
        print(f"\n  C++ compiler on every side: {compiler}")
        print(f"  {'measurement':<28} " + " ".join(f"{side:>18}" for side in sides)
              + f" {'buildkit / cpp_ext':>19} {'PCH on / off':>13}")
        for name, times in rows.items():
            cells = " ".join(f"{times[side]:16.2f} s" for side in sides)
            print(f"  {name:<28} {cells} {times['buildkit'] / times['cpp_extension']:18.2f}x "
                  f"{times['buildkit'] / times['buildkit, PCH off']:12.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
