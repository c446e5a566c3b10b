"""Torch extensions built by torch.utils.cpp_extension against the same built by buildkit.

Three projects, each built by both tools in one run, the sides taking turns run by run:

* tests/packages/torch_ext: a pybind11 module and a TORCH_LIBRARY op library.
  cpp_extension: a setup.py with two CppExtension, `python setup.py build_ext --inplace`;
  buildkit: two `buildkit_torch_extension` targets in a CMakeLists.txt, `python -m buildkit develop .`.
* tests/packages/torch_dropin_ops (shaped like pytorch/extension-cpp) and
  tests/packages/torch_dropin_segments (shaped like torch_scatter): setup.py projects that
  import buildkit.torch, the drop-in for cpp_extension's setup.py API.  cpp_extension's
  side is a copy whose import line is changed back to `torch.utils.cpp_extension`.  Each
  tool builds them two ways, each in its own copy:
      in place:        cpp_extension `python setup.py build_ext --inplace`,
                       buildkit `python -m buildkit develop .`
      pip install -e:  `pip install --no-build-isolation --no-deps --use-pep517 -e .` (both)

Rows: cold build (one run), no-op rebuild, a one-token edit of one .cpp and, where a CUDA
build can be made (torch built with CUDA, an nvcc of the same major version; no GPU is
needed to compile), of one .cu; the rest are medians of --runs.  After each edit the
built libraries must differ; the module is imported and checked after the cold build and
after the .cpp edits.  Every side builds with compiler caches off (CCACHE_DISABLE=1, no
sccache, buildkit's compiler-launcher `none`), MAX_JOBS=--jobs and, for CUDA,
TORCH_CUDA_ARCH_LIST=--cuda-arch-list and CUDA_HOME set alike.  Each side builds in its own
overlay venv of --python (nothing is registered into that venv itself).  Printed: each
row's times and the ratio buildkit / cpp_extension of the same way; the rows skipped, why.

    python benchmarks/torch_extension.py --python VENV/bin/python --runs 3
    python benchmarks/torch_extension.py --python VENV/bin/python --projects torch_dropin_ops --cpu-only

The interpreter needs torch, setuptools, ninja and buildkit installed; without torch the
script says so and exits 0 without measuring.  Not run by the tests or by CI (torch is a
large wheel; tests/test_torch_extension.py and tests/test_torch_dropin.py test the builds).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from buildkit_testing.benchmark_project import BUILDKIT_BACKEND, pyproject_toml
from buildkit_testing.cuda import device_link_lto, find_nvcc, find_toolkit_root, nvcc_release
from buildkit_testing.projects import copy_test_package
from buildkit_testing.timing import timed, token_flip
from buildkit_testing.torch_bench import start, torch_cuda
from buildkit_testing.venvs import overlay_venv

BUILD_EXT = ["setup.py", "build_ext", "--inplace"]
DEVELOP = ["-m", "buildkit", "develop", "."]
# --use-pep517: what pip 25.3 and later always do; an older pip runs `setup.py develop` for a project
# without pyproject.toml, which today's setuptools hands back to pip as an isolated build.
PIP_EDITABLE = ["-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--use-pep517", "-e", "."]
DROPIN_IMPORT, CPP_EXTENSION_IMPORT = "from buildkit.torch import", "from torch.utils.cpp_extension import"


@dataclass(frozen=True)
class Edit:
    source: str  # relative to the project's root
    tokens: tuple[str, str]  # the token and what it becomes, and back the next run


@dataclass(frozen=True)
class Project:
    package: str  # tests/packages/<package>
    shape: str
    cpp: Edit
    check: str  # imports the built module and checks it; {edited}: whether the .cpp edit is in
    cu: Edit | None = None  # None: no CUDA sources
    cuda_env: dict[str, str] = field(default_factory=dict)  # what makes the package build its CUDA code
    cuda_dlink_lto: bool = False  # its CUDA build device-links with -dlto (cpp_extension's dlink=True)
    import_from: str = "."  # where the check runs, relative to the root


PROJECTS = {p.package: p for p in (
    Project("torch_ext", "a pybind11 module and an op library, CMake for buildkit",
            Edit("csrc/add_one.cpp", ("return x + 1;", "return x + 2;")),
            "import torch, torchext; x = torch.arange(3.); step = 2 if {edited} else 1\n"
            "assert torch.equal(torchext.add_one(x), x + step) and torch.equal(torchext.scale(x, 2.0), x * 2)",
            import_from="src"),
    Project("torch_dropin_ops", "extension-cpp-shaped",
            Edit("dropin_ops/csrc/ops.cpp", ("pb[i] + static_cast<float>(c)", "pb[i] - static_cast<float>(c)")),
            "import torch, dropin_ops; a, b = torch.rand(4, 5), torch.rand(4, 5); c = -2.5 if {edited} else 2.5\n"
            "assert torch.allclose(dropin_ops.muladd(a, b, 2.5), a * b + c)",
            cu=Edit("dropin_ops/csrc/cuda/ops.cu", ("fma_of(a[i], b[i], c)", "fma_of(a[i], b[i], -c)")),
            cuda_env={"DROPIN_CUDA": "1"}, cuda_dlink_lto=True),
    Project("torch_dropin_segments", "torch_scatter-shaped",
            Edit("csrc/cpu/segment_cpu.cpp", (".sum(0);", ".mean(0);")),
            "import torch, torch_segments; src = torch.randn(10, 3); bounds = [0, 3, 3, 7, 10]\n"
            "reduce = 'mean' if {edited} else 'sum'\n"
            "expected = torch.stack([getattr(src[s:e], reduce)(0) if e > s else torch.zeros(3)\n"
            "                        for s, e in zip(bounds[:-1], bounds[1:])])\n"
            "assert torch.allclose(torch_segments.segment_sum_csr(src, torch.tensor(bounds)), expected)",
            cu=Edit("csrc/cuda/segment_cuda.cu", ("kThreads = 256;", "kThreads = 128;")),
            cuda_env={"FORCE_CUDA": "1"}),
)}

# torch_ext's cpp_extension side: its setup.py; buildkit's: its pyproject.toml less what only wheels need.
TORCH_EXT_SETUP = """\
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
TORCH_EXT_PYPROJECT = pyproject_toml("torchext", BUILDKIT_BACKEND, 'version = "0.1.0"\nrequires-python = ">=3.11"',
                                     '[tool.buildkit]\ninstall-prefix = "wheel-root"', requires=("torch",))


@dataclass(frozen=True)
class Side:
    tool: str  # cpp_extension or buildkit
    way: str  # in place or pip install -e
    root: Path
    python: Path  # its overlay venv's
    command: list[str]  # after the interpreter
    env: dict[str, str]

    @property
    def name(self) -> str:
        return f"{self.tool}, {self.way}"

    def build(self) -> float:
        return timed([str(self.python), *self.command], self.root, self.env)


def make_sides(project: Project, work: Path, base: Path, env: dict[str, str]) -> list[Side]:
    """Each tool's copies of ``project``, each with its own overlay venv of ``base``."""
    def side(tool: str, way: str, command: list[str], extra: dict[str, str] | None = None) -> Side:
        folder = work / project.package / f"{tool}-{way.replace(' ', '-')}"
        root = copy_test_package(project.package, folder / project.package)
        python = overlay_venv(folder / "venv", base)
        path = f"{python.parent}{os.pathsep}{env['PATH']}"
        return Side(tool, way, root, python, command, {**env, "PATH": path, **(extra or {})})

    if project.package == "torch_ext":
        sides = [side("cpp_extension", "in place", BUILD_EXT), side("buildkit", "in place", DEVELOP)]
        (sides[0].root / "pyproject.toml").unlink()
        (sides[0].root / "setup.py").write_text(TORCH_EXT_SETUP)
        (sides[1].root / "pyproject.toml").write_text(TORCH_EXT_PYPROJECT)
        return sides
    pip = {"PIP_CONSTRAINT": os.devnull, "PIP_NO_INDEX": "1"}  # no cap on torch from a pip config, no index
    sides = [side("cpp_extension", "in place", BUILD_EXT), side("buildkit", "in place", DEVELOP),
             side("cpp_extension", "pip install -e", PIP_EDITABLE, pip),
             side("buildkit", "pip install -e", PIP_EDITABLE, pip)]
    for cpp_extension in (s for s in sides if s.tool == "cpp_extension"):
        setup_py = cpp_extension.root / "setup.py"
        text = setup_py.read_text()
        if DROPIN_IMPORT not in text:
            raise SystemExit(f"{setup_py} has no line `{DROPIN_IMPORT} ...` to change back")
        setup_py.write_text(text.replace(DROPIN_IMPORT, CPP_EXTENSION_IMPORT))
    return sides


def cuda_settings(args: argparse.Namespace, work: Path) -> tuple[dict[str, str], str | None, bool]:
    """The variables of a CUDA build (both tools alike), why there is none (None: there is),
    and whether the toolkit device-links with -dlto."""
    if args.cpu_only:
        return {}, "--cpu-only", False
    torch_cuda_version, nvcc, toolkit = torch_cuda(args.python), find_nvcc(), find_toolkit_root()
    if torch_cuda_version is None:
        return {}, "torch is a CPU build", False
    if nvcc is None or toolkit is None:
        return {}, "no nvcc or CUDA toolkit with headers (CUDACXX, PATH, /usr/local/cuda)", False
    release = nvcc_release(nvcc)
    if release is None or release.split(".")[0] != torch_cuda_version.split(".")[0]:
        return {}, f"nvcc's CUDA {release} is not torch's major version ({torch_cuda_version})", False
    env = {"TORCH_CUDA_ARCH_LIST": args.cuda_arch_list, "CUDA_HOME": str(toolkit)}
    return env, None, device_link_lto(toolkit, work / "dlto-probe")


def libraries_digest(root: Path) -> str:
    """One digest of every shared library built under ``root`` (in place and in the build
    folders), not of torch's that buildkit's build-env mirror links to."""
    digest = hashlib.sha256()
    for library in sorted(root.rglob("*.so")):
        if not library.is_symlink() and "build-env" not in library.relative_to(root).parts:
            digest.update(str(library.relative_to(root)).encode() + b"\0" + library.read_bytes())
    return digest.hexdigest()


def check(side: Side, project: Project) -> None:
    """The built module imported and checked, against the .cpp edit's present state."""
    edited = project.cpp.tokens[1] in (side.root / project.cpp.source).read_text()
    timed([str(side.python), "-c", project.check.format(edited=edited)], side.root / project.import_from, side.env)


def alternating(sides: list[Side], runs: int, edit: Edit | None) -> dict[str, float]:
    """The median of ``runs`` builds of each side, the sides taking turns (in reverse order
    every other run); with ``edit`` made before each build, whose libraries must then differ."""
    samples: dict[str, list[float]] = {side.name: [] for side in sides}
    for run in range(runs):
        for side in sides if run % 2 == 0 else sides[::-1]:
            if edit is None:
                samples[side.name].append(side.build())
                continue
            token_flip(side.root / edit.source, edit.tokens)()
            before = libraries_digest(side.root)
            samples[side.name].append(side.build())
            if libraries_digest(side.root) == before:
                raise SystemExit(f"{side.name}: an edit of {edit.source} left every library as it was")
    return {name: statistics.median(times) for name, times in samples.items()}


def measure(project: Project, sides: list[Side], runs: int, cuda: bool) -> dict[str, dict[str, float]]:
    rows = {"cold build": {side.name: side.build() for side in sides}}
    for side in sides:
        check(side, project)
    rows["no-op rebuild"] = alternating(sides, runs, None)
    rows[f"one-token edit of {Path(project.cpp.source).name}"] = alternating(sides, runs, project.cpp)
    for side in sides:
        check(side, project)
    if cuda and project.cu:
        rows[f"one-token edit of {Path(project.cu.source).name}"] = alternating(sides, runs, project.cu)
    return rows


def cuda_skip_reason(project: Project, no_cuda: str | None, dlto: bool) -> str | None:
    """Why ``project`` builds without its CUDA code; None when it builds it."""
    if project.cu is None:
        return "the project has no CUDA sources"
    if no_cuda:
        return no_cuda
    if project.cuda_dlink_lto and not dlto:
        return ("this CUDA toolkit cannot device-link with -dlto, which cpp_extension adds to every dlink=True "
                "extension (nvlink cannot load the NVVM library)")
    return None


def report(project: Project, sides: list[Side], rows: dict[str, dict[str, float]], skipped: str | None) -> None:
    build = "a CPU build" if skipped else "a CUDA build"
    print(f"\n{project.package} ({project.shape}), {build}" + (f"; no .cu row: {skipped}" if skipped else ""))
    print(f"  {'measurement':<34} {'way':<15} {'cpp_extension':>13} {'buildkit':>10} {'buildkit / cpp_extension':>25}")
    ways = dict.fromkeys(side.way for side in sides)
    for name, times in rows.items():
        for way in ways:
            cpp, bk = times[f"cpp_extension, {way}"], times[f"buildkit, {way}"]
            print(f"  {name:<34} {way:<15} {cpp:11.2f} s {bk:8.2f} s {bk / cpp:24.2f}x", flush=True)


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--projects", nargs="+", choices=list(PROJECTS), default=list(PROJECTS),
                        help="the projects to measure (default: all three)")
    parser.add_argument("--cpu-only", action="store_true", help="no CUDA build even where one can be made")
    parser.add_argument("--cuda-arch-list", default="8.0;9.0", help="TORCH_CUDA_ARCH_LIST of the CUDA builds")


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    bench = start(__doc__, 5, argv, "buildkit-torch-bench-", options)
    if bench is None:
        return 0
    args, work = bench.args, bench.work
    print(f"benchmarks/torch_extension.py: torch {bench.torch}, median of {args.runs} runs (cold: one), "
          f"Python {sys.version.split()[0]}, {os.cpu_count()} cores, MAX_JOBS={args.jobs}, compiler caches off, "
          f"CUDA architectures {args.cuda_arch_list}", flush=True)
    try:
        cuda_env, no_cuda, dlto = cuda_settings(args, work)
        for package in args.projects:
            project = PROJECTS[package]
            skipped = cuda_skip_reason(project, no_cuda, dlto)
            env = {**bench.env, **({} if skipped else {**cuda_env, **project.cuda_env})}
            sides = make_sides(project, work, Path(args.python), env)
            report(project, sides, measure(project, sides, args.runs, cuda=skipped is None), skipped)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nthe run took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
