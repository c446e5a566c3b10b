"""buildkit.torch against a real torch: projects whose setup.py is cpp_extension's with the
import changed, built by `buildkit develop` and into wheels, in a fresh venv per torch row
(the newest torch on the package index and a pinned older one: buildkit_testing.torch_venvs).

* tests/packages/torch_dropin_ops: shaped like pytorch/extension-cpp (TORCH_LIBRARY ops in
  one `_C` module for the stable ABI, `extra_compile_args` per compiler, bdist_wheel's
  py_limited_api, a CUDA variant with device linking);
* tests/packages/torch_dropin_segments: shaped like torch_scatter (a module per csrc/*.cpp
  found by globbing, plain module names, include_dirs, define_macros, undef_macros, OpenMP
  from torch's config, `-s`, no pyproject.toml);
* torch_scatter itself: its sdist from the package index, imports changed, built.

Selected with `pytest -m torch` (docs/ci.md says how long it takes).  The CUDA tests need
nvcc and a CUDA build of torch (the newest row); there is no GPU, so they compile, link and
load the modules and run the CPU kernels.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tarfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from buildkit.builder.configure.torch_env import cuda_version
from buildkit.frontends.cli.audit import audit
from buildkit_testing.compilers import find_clang
from buildkit_testing.cuda import cuda_toolkit_root, device_link_lto, find_nvcc
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.torch_venvs import public_version, wheel_without_isolation
from buildkit_testing.venvs import pip_into, site_packages

pytestmark = [pytest.mark.torch, pytest.mark.slow]

# A no-op `buildkit develop` of such a project, wall time (interpreter start included) of the
# best of several runs: the machine's other work only ever adds to a run.
NOOP_BUDGET_S = 0.15

OPS_CHECK = """
import torch, dropin_ops
a, b = torch.rand(4, 5), torch.rand(4, 5)
assert torch.allclose(dropin_ops.muladd(a, b, 2.5), a * b + 2.5)
factors = torch.arange(4, dtype=torch.float32)
assert torch.equal(dropin_ops.scale_rows(a, factors), a * factors[:, None])
print(dropin_ops._C.__file__)
"""

SEGMENTS_CHECK = """
import torch, torch_segments
src = torch.randn(10, 3)
indptr = torch.tensor([0, 3, 3, 7, 10])
expected = torch.stack([src[int(s):int(e)].sum(0) for s, e in zip(indptr[:-1], indptr[1:])])
assert torch.allclose(torch_segments.segment_sum_csr(src, indptr), expected)
assert torch_segments.version_code == 7
print(sorted(p.name for p in __import__("pathlib").Path(torch_segments.__file__).parent.glob("*.so")))
"""


def develop(python: Path, project: Path, **env: str) -> str:
    """`buildkit develop` (the console script of the venv), its output."""
    done = run([python.parent / "buildkit", "develop", project], cwd=project, env=clean_env(**env))
    return done.stdout + done.stderr


def checked(python: Path, script: str, where: Path) -> str:
    where.mkdir(exist_ok=True)
    return run([python, "-c", script], cwd=where, env=clean_env()).stdout


def noop_times(python: Path, project: Path, runs: int = 7, **env: str) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        output = develop(python, project, **env)
        times.append(time.perf_counter() - started)
        assert "up to date" in output and "configuring" not in output, output
    return times


def setup_runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_extension_cpp_like_develop_no_op_and_edits(test_package: Callable[..., Path], torch_python: Path,
                                                    tmp_path: Path) -> None:
    project = test_package("torch_dropin_ops")
    log = tmp_path / "setup-runs.txt"
    env = {"DROPIN_SETUP_LOG": str(log)}
    develop(torch_python, project, **env)
    assert setup_runs(log) == 1
    module = checked(torch_python, OPS_CHECK, tmp_path / "elsewhere").strip()
    assert module.endswith("/dropin_ops/_C.abi3.so"), module  # py_limited_api=True: the stable ABI

    # Nothing changed: answered without running setup.py (which imports torch), nor importing torch.
    times = noop_times(torch_python, project, **env)
    assert setup_runs(log) == 1
    assert min(times) <= NOOP_BUDGET_S, f"no-op develop took {times} s"
    imports = run([torch_python, "-X", "importtime", "-m", "buildkit", "develop", project], cwd=project,
                  env=clean_env(**env)).stderr
    imported = {line.split("|")[-1].strip() for line in imports.splitlines() if line.startswith("import time:")}
    assert "up to date" in imports and not {"torch", "setuptools"} & imported, sorted(imported)

    # A source edit is ninja's: rebuilt without running setup.py.
    ops = project / "dropin_ops" / "csrc" / "ops.cpp"
    ops.write_text(ops.read_text().replace("x * factors.unsqueeze(1)", "factors.unsqueeze(1) * x"))
    output = develop(torch_python, project, **env)
    assert "compiling" in output and setup_runs(log) == 1, output
    checked(torch_python, OPS_CHECK, tmp_path / "elsewhere")
    # And the develop after it is a no-op again: the install replaced the module in the package
    # folder (its time moved, its list did not), and the import wrote a bytecode cache there.
    output = develop(torch_python, project, **env)
    assert "up to date" in output and setup_runs(log) == 1, output

    # An edit to setup.py runs it again (its extensions may have changed); nothing is rebuilt.
    setup_py = project / "setup.py"
    setup_py.write_text(setup_py.read_text() + "# an edit\n")
    output = develop(torch_python, project, **env)
    assert setup_runs(log) == 2 and "configuring" not in output and "compiling" not in output, output
    assert "running setup.py: setup.py changed since the last develop" in output, output
    # Its one result line says setup.py's run (torch imported: seconds) and the whole time, never "up to date".
    line = re.search(r"^buildkit: done in ([\d.]+) s: setup\.py ([\d.]+) s, build [\d.]+ s \(nothing to rebuild\)",
                     output, re.M)
    assert "up to date" not in output and line and float(line[1]) >= float(line[2]), output

    # A source added where setup.py globs runs setup.py again, which builds it in.
    (ops.parent / "twice.cpp").write_text(
        "#include <ATen/ATen.h>\n#include <torch/library.h>\n"
        "static at::Tensor twice(const at::Tensor& x) { return x * 2; }\n"
        'TORCH_LIBRARY_FRAGMENT(dropin_ops, m) { m.def("twice(Tensor x) -> Tensor"); }\n'
        'TORCH_LIBRARY_IMPL(dropin_ops, CPU, m) { m.impl("twice", &twice); }\n')
    output = develop(torch_python, project, **env)
    assert setup_runs(log) == 3 and "running setup.py: the sources in dropin_ops/csrc changed" in output, output
    checked(torch_python, "import torch, dropin_ops\nx = torch.ones(3)\n"
                          "assert torch.equal(torch.ops.dropin_ops.twice(x), 2 * x)\n", tmp_path / "elsewhere")


def test_with_clang_the_precompiled_header_holds_torchs_instantiations(test_package: Callable[..., Path],
                                                                      torch_python: Path, tmp_path: Path) -> None:
    """CXX=clang++ (docs/migration/from-cpp-extension.md advises it for the edit loop): the C++
    sources compile against clang's .pch, which CMake makes with -fpch-instantiate-templates;
    the module, built by clang, loads into torch (built by GCC) and computes right, also after
    an edit; and going back to the default compiler configures afresh, saying why."""
    clang = find_clang()
    if clang is None:
        pytest.skip("clang++ is not installed (.ci/run installs Debian's clang)")
    project = test_package("torch_dropin_ops")
    develop(torch_python, project, CXX=clang)
    checked(torch_python, OPS_CHECK, tmp_path / "elsewhere")
    [commands] = build_folder(project, torch_python).rglob("compile_commands.json")
    entries = json.loads(commands.read_text())
    header = [e["command"] for e in entries if e["output"].endswith(".pch")]
    sources = [e["command"] for e in entries if e["file"].endswith(".cpp") and not e["output"].endswith(".pch")]
    assert len(header) == 1 and "-fpch-instantiate-templates" in header[0], header
    assert sources and all(c.startswith(clang) and "-include-pch" in c for c in sources), sources

    ops = project / "dropin_ops" / "csrc" / "ops.cpp"
    ops.write_text(ops.read_text().replace("x * factors.unsqueeze(1)", "factors.unsqueeze(1) * x"))
    assert "compiling" in develop(torch_python, project, CXX=clang)
    checked(torch_python, OPS_CHECK, tmp_path / "elsewhere")

    output = develop(torch_python, project)
    assert "environment CXX changed" in output and "compiling" in output, output
    checked(torch_python, OPS_CHECK, tmp_path / "elsewhere")


def test_extension_cpp_like_wheel_is_one_abi3_wheel_pinned_to_torch(
        test_package: Callable[..., Path], torch_python: Path, wheelhouse: Path, tmp_path: Path) -> None:
    project = test_package("torch_dropin_ops")
    wheel = wheel_without_isolation(torch_python, wheelhouse, project, tmp_path / "dist")
    assert wheel.name == "dropin_ops-0.1.0-cp39-abi3-linux_x86_64.whl", wheel.name
    archive = zipfile.ZipFile(wheel)
    assert "dropin_ops/_C.abi3.so" in archive.namelist(), archive.namelist()
    metadata = archive.read("dropin_ops-0.1.0.dist-info/METADATA").decode()
    assert f"Requires-Dist: torch=={public_version(torch_python, 'torch')}" in metadata.splitlines(), metadata
    assert not (project / "dropin_ops" / "_C.abi3.so").exists(), "a wheel build leaves the source tree as it was"

    # buildkit's wheel audit: abi3audit finds only the stable ABI of 3.9 in the module.
    torch_libraries = [p.name for p in (site_packages(torch_python) / "torch" / "lib").glob("lib*.so*")]
    findings = audit(wheel, allowed_external=torch_libraries).findings
    assert [f for f in findings if f.check != "twine"] == [], findings  # twine: no README in this test project

    pip_into(torch_python, wheelhouse, "install", "-q", "--no-deps", wheel)
    try:
        assert checked(torch_python, OPS_CHECK, tmp_path / "elsewhere").strip().endswith("_C.abi3.so")
    finally:
        pip_into(torch_python, wheelhouse, "uninstall", "-q", "-y", "dropin_ops")


def test_torch_scatter_like_develop_and_wheel(test_package: Callable[..., Path], torch_python: Path,
                                              wheelhouse: Path, tmp_path: Path) -> None:
    project = test_package("torch_dropin_segments")  # no pyproject.toml, as torch_scatter's sdist
    output = develop(torch_python, project)
    assert "use_ninja=False: buildkit builds with CMake and Ninja all the same" in output, output
    modules = checked(torch_python, SEGMENTS_CHECK, tmp_path / "elsewhere")
    assert "['_segment_cpu.so', '_version_cpu.so']" in modules, modules  # no_python_abi_suffix=True
    times = noop_times(torch_python, project, runs=5)
    assert min(times) <= NOOP_BUDGET_S, f"no-op develop took {times} s"
    ninja = (build_folder(project) / "build.ninja").read_text()
    assert "-fopenmp" in ninja and "-USEGMENTS_POISON" in ninja  # torch's OpenMP, read by setup.py; undef_macros

    wheel = wheel_without_isolation(torch_python, wheelhouse, project, tmp_path / "dist")
    names = zipfile.ZipFile(wheel).namelist()
    assert {"torch_segments/_segment_cpu.so", "torch_segments/_version_cpu.so"} <= set(names), names
    assert re.fullmatch(r"torch_segments-1\.2\.0-cp3\d+-cp3\d+-linux_x86_64\.whl", wheel.name), wheel.name


def cuda_toolkit_for(torch_python: Path) -> Path:
    """The CUDA toolkit (CUDA_HOME, as a user sets it) for a CUDAExtension build against this
    row's torch; the test skips without nvcc or with a CPU build of torch."""
    if find_nvcc() is None:
        pytest.skip("needs nvcc")
    if cuda_version(site_packages(torch_python) / "torch") is None:
        pytest.skip("this row's torch is a CPU build: CUDAExtension needs a CUDA build of torch")
    return cuda_toolkit_root()


def test_cuda_extension_compiles_links_device_code_and_loads(
        test_package: Callable[..., Path], torch_python: Path, tmp_path: Path) -> None:
    toolkit = cuda_toolkit_for(torch_python)
    project = test_package("torch_dropin_ops")
    # dlink=True links device code with -dlto, as cpp_extension does; a toolkit without the
    # link-time optimizer (this machine's lacks libnvJitLink) device-links without it.
    dlink = "lto" if device_link_lto(toolkit, tmp_path / "probe") else "plain"
    output = develop(torch_python, project, DROPIN_CUDA="1", DROPIN_DLINK=dlink, CUDA_HOME=str(toolkit),
                     TORCH_CUDA_ARCH_LIST="7.5")
    ninja = (build_folder(project) / "build.ninja").read_text()
    assert "sm_75" in ninja and "sm_50" not in ninja, output  # TORCH_CUDA_ARCH_LIST, with PyTorch's meaning
    assert re.search(r"-rdc=true|--relocatable-device-code=true", ninja)  # dlink=True: device code linked
    assert list(build_folder(project).rglob("cmake_device_link.o")), "no device link step"
    assert f"{toolkit}/bin/nvcc" in (build_folder(project) / "CMakeCache.txt").read_text()  # CUDA_HOME's nvcc
    assert ("-dlto" in ninja) is (dlink == "lto")
    checked(torch_python, OPS_CHECK, tmp_path / "elsewhere")  # loads without a GPU; the CPU kernels run


def test_torch_scatter_like_cuda_libraries_compile_and_load(test_package: Callable[..., Path], torch_python: Path,
                                                            tmp_path: Path) -> None:
    """FORCE_CUDA=1 (no GPU here): a cuda library beside each cpu one, as torch_scatter builds them,
    csrc/cuda's kernel in the one that has it; the package loads the cuda ones."""
    toolkit = cuda_toolkit_for(torch_python)
    project = test_package("torch_dropin_segments")
    log = tmp_path / "setup-runs.txt"
    env = {"FORCE_CUDA": "1", "CUDA_HOME": str(toolkit), "TORCH_CUDA_ARCH_LIST": "7.5", "DROPIN_SETUP_LOG": str(log)}
    output = develop(torch_python, project, **env)
    modules = checked(torch_python, SEGMENTS_CHECK, tmp_path / "elsewhere")  # the CPU kernel, from the cuda library
    assert "['_segment_cpu.so', '_segment_cuda.so', '_version_cpu.so', '_version_cuda.so']" in modules, modules
    ninja = (build_folder(project) / "build.ninja").read_text()
    assert "segment_cuda.cu" in ninja and "sm_75" in ninja and "-DWITH_CUDA" in ninja, output

    # A one-token .cu edit is ninja's, and the develop after it a no-op: setup.py runs neither
    # (the rebuilt library the install put into the package folder once made the next one run it).
    kernel = project / "csrc" / "cuda" / "segment_cuda.cu"
    kernel.write_text(kernel.read_text().replace("kThreads = 256;", "kThreads = 128;"))
    output = develop(torch_python, project, **env)
    assert "compiling" in output and setup_runs(log) == 1, output
    output = develop(torch_python, project, **env)
    assert "up to date" in output and setup_runs(log) == 1, output


SCATTER_CHECK = """
import torch, torch_scatter
src = torch.randn(12, 4)
index = torch.tensor([0, 1, 0, 2, 2, 1, 0, 3, 3, 1, 2, 0])
for reduce in ("sum", "mean", "max", "min"):
    ours = torch_scatter.scatter(src, index, dim=0, reduce=reduce)
    ref = torch.zeros(4, 4).scatter_reduce(0, index[:, None].expand(-1, 4), src,
                                           reduce={"max": "amax", "min": "amin"}.get(reduce, reduce),
                                           include_self=False)
    assert torch.allclose(ours, ref, atol=1e-6), (reduce, ours, ref)
indptr = torch.tensor([0, 2, 5, 12])
expected = torch.stack([src[0:2].sum(0), src[2:5].sum(0), src[5:12].sum(0)])
assert torch.allclose(torch_scatter.segment_csr(src, indptr, reduce="sum"), expected, atol=1e-6)
print("torch_scatter", torch_scatter.__version__)
"""


def test_torch_scatter_from_its_sdist_with_its_imports_changed(torch_python: Path, wheelhouse: Path,
                                                               tmp_path: Path) -> None:
    """torch_scatter's sdist from the package index (it has no pyproject.toml and imports torch in
    setup.py, so pip's metadata step needs this venv's torch: --no-build-isolation), its setup.py's
    `torch.utils.cpp_extension` import changed to `buildkit.torch`, built in place and checked
    against torch's own scatter_reduce (its test suite is not in the sdist)."""
    download = tmp_path / "download"
    pip = run([sys.executable, "-m", "pip", "--python", torch_python, "download", "-q", "--no-binary", ":all:",
               "--no-deps", "--no-build-isolation", "-d", download, "torch-scatter"], check=False, timeout=600,
              env=clean_env(PIP_CONSTRAINT=os.devnull))
    if pip.returncode != 0:
        pytest.skip(f"torch-scatter's sdist cannot be downloaded here: {pip.stderr.strip()[-400:]}")
    [sdist] = download.glob("torch_scatter-*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    [project] = (tmp_path / "src").glob("torch_scatter-*")
    setup_py = project / "setup.py"
    text = setup_py.read_text()
    assert "from torch.utils.cpp_extension import" in text
    setup_py.write_text(text.replace("from torch.utils.cpp_extension import", "from buildkit.torch import"))

    develop(torch_python, project, FORCE_ONLY_CPU="1")
    assert "torch_scatter" in checked(torch_python, SCATTER_CHECK, tmp_path / "elsewhere")
    times = noop_times(torch_python, project, runs=5, FORCE_ONLY_CPU="1")
    assert min(times) <= NOOP_BUDGET_S, f"no-op develop took {times} s"
    wheel = wheel_without_isolation(torch_python, wheelhouse, project, tmp_path / "dist", FORCE_ONLY_CPU="1")
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"torch_scatter/_{name}_cpu.so" for name in ("version", "scatter", "segment_csr", "segment_coo")} \
        <= set(names), names
