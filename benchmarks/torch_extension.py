"""A torch extension built with torch.utils.cpp_extension against the same one built by buildkit.

The sources are tests/packages/torch_ext's: a pybind11 module (`add_one`) and a
TORCH_LIBRARY op library, one C++ file each.  Each tool builds its own copy in place:

    cpp_extension: python setup.py build_ext --inplace   (two CppExtension, BuildExtension, ninja)
    buildkit:      python -m buildkit develop .          (two buildkit_torch_extension targets)

and the script prints cold build, no-op rebuild and touch-one-file rebuild times, each
as a ratio to the cpp_extension figure measured in the same run:

    python benchmarks/torch_extension.py                         # this interpreter
    python benchmarks/torch_extension.py --python VENV/bin/python --runs 3

The interpreter needs torch, setuptools, ninja and buildkit installed; without torch
the script says so and exits 0 without measuring.  Not run by the tests or by CI:
torch is a 190 MB wheel (tests/test_torch_extension.py is its test, under `-m torch`).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from buildkit_testing.benchmark_project import BUILDKIT_BACKEND, pyproject_toml
from buildkit_testing.paths import TEST_PACKAGES
from buildkit_testing.projects import copy_sources
from buildkit_testing.timing import median, timed, touch
from buildkit_testing.torch_bench import start

SOURCES = TEST_PACKAGES / "torch_ext"

CPP_EXTENSION_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    name="torchext",
    version="0.1.0",
    package_dir={"": "src"},
    packages=["torchext"],
    ext_modules=[CppExtension("torchext._C", ["csrc/add_one.cpp"]),
                 CppExtension("torchext.libtorchext_ops", ["csrc/ops.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)
"""

# tests/packages/torch_ext's pyproject.toml less what only wheels need.
BUILDKIT_PYPROJECT = pyproject_toml("torchext", BUILDKIT_BACKEND, 'version = "0.1.0"\nrequires-python = ">=3.11"',
                                    '[tool.buildkit]\ninstall-prefix = "wheel-root"', requires=("torch",))

CHECK = ("import torch, torchext; x = torch.arange(3.); "
         "assert torch.equal(torchext.add_one(x), x + 1) and torch.equal(torchext.scale(x, 2.0), x * 2)")


def projects(work: Path) -> dict[str, tuple[Path, list[str]]]:
    """Each tool's copy of the sources and its in-place build command (python comes first)."""
    cpp = copy_sources(SOURCES, work / "cpp_extension")
    (cpp / "pyproject.toml").unlink()
    (cpp / "setup.py").write_text(CPP_EXTENSION_SETUP)
    bk = copy_sources(SOURCES, work / "buildkit")
    (bk / "pyproject.toml").write_text(BUILDKIT_PYPROJECT)
    return {"cpp_extension": (cpp, ["setup.py", "build_ext", "--inplace"]),
            "buildkit": (bk, ["-m", "buildkit", "develop", "."])}


def main(argv: list[str] | None = None) -> int:
    bench = start(__doc__, 5, argv, "buildkit-torch-bench-")
    if bench is None:
        return 0
    args, version, env, work = bench.args, bench.torch, bench.env, bench.work
    rows: dict[str, dict[str, float]] = {"cold build": {}, "no-op rebuild": {}, "touch one .cpp": {}}
    try:
        built = projects(work)
        for tool, (root, command) in built.items():
            rows["cold build"][tool] = timed([args.python, *command], root, env)
            timed([args.python, "-c", CHECK], root / "src", env)  # what was built works
        for tool, (root, command) in built.items():
            rows["no-op rebuild"][tool] = median([args.python, *command], root, env, args.runs)
        for tool, (root, command) in built.items():
            rows["touch one .cpp"][tool] = median([args.python, *command], root, env, args.runs,
                                                  before=touch(root / "csrc" / "add_one.cpp"))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nbenchmarks/torch_extension.py: torch {version}, median of {args.runs} runs (cold: one), "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} cores\n")
    print(f"  {'measurement':<16} {'cpp_extension':>14} {'buildkit':>10} {'buildkit / cpp_extension':>26}")
    for name, times in rows.items():
        ratio = times["buildkit"] / times["cpp_extension"]
        print(f"  {name:<16} {times['cpp_extension']:12.3f} s {times['buildkit']:8.3f} s {ratio:25.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
