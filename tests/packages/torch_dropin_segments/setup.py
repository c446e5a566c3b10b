# A torch_scatter-shaped project built with buildkit.torch: one op library per csrc/*.cpp and
# suffix, each with its csrc/cpu/<name>_cpu.cpp (and for the cuda suffix csrc/cuda/<name>_cuda.cu),
# found by globbing; plain module names (no_python_abi_suffix) loaded with torch.ops.load_library;
# OpenMP when torch has it; no pyproject.toml. The cuda libraries are built where torch sees a GPU
# or with FORCE_CUDA=1, as torch_scatter's are. Only the import differs from cpp_extension's setup.py.
import glob
import itertools
import os
import os.path as osp
import sys

import torch
from setuptools import find_packages, setup
from torch.__config__ import parallel_info

from buildkit.torch import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

if os.environ.get("DROPIN_SETUP_LOG"):  # the tests count the runs of this file
    with open(os.environ["DROPIN_SETUP_LOG"], "a") as log:
        log.write("ran\n")

SUFFIXES = ["cpu", "cuda"] if torch.cuda.is_available() and CUDA_HOME is not None else ["cpu"]
if os.getenv("FORCE_CUDA", "0") == "1":
    SUFFIXES = ["cuda", "cpu"]
if os.getenv("FORCE_ONLY_CPU", "0") == "1":
    SUFFIXES = ["cpu"]


def get_extensions():
    extensions = []
    extensions_dir = "csrc"
    for main, suffix in itertools.product(sorted(glob.glob(osp.join(extensions_dir, "*.cpp"))), SUFFIXES):
        name = osp.basename(main)[:-4]
        sources = [main]
        cpu = osp.join(extensions_dir, "cpu", f"{name}_cpu.cpp")
        if osp.exists(cpu):
            sources.append(cpu)
        cuda = osp.join(extensions_dir, "cuda", f"{name}_cuda.cu")
        if suffix == "cuda" and osp.exists(cuda):
            sources.append(cuda)
        # SEGMENTS_POISON: defined, then undefined by undef_macros, which distutils puts after.
        define_macros = [("WITH_PYTHON", None), ("SEGMENTS_VERSION_CODE", "7"), ("SEGMENTS_POISON", None)]
        extra_compile_args = {"cxx": ["-O3", "-Wno-sign-compare"]}
        info = parallel_info()
        if "backend: OpenMP" in info and "OpenMP not found" not in info and sys.platform != "darwin":
            extra_compile_args["cxx"] += ["-DAT_PARALLEL_OPENMP", "-fopenmp"]
        if suffix == "cuda":
            define_macros.append(("WITH_CUDA", None))
            extra_compile_args["nvcc"] = ["-O3", "--expt-relaxed-constexpr"]
        extension = CppExtension if suffix == "cpu" else CUDAExtension
        extensions.append(extension(
            f"torch_segments._{name}_{suffix}",
            sources,
            include_dirs=[extensions_dir],
            define_macros=define_macros,
            undef_macros=["SEGMENTS_POISON"],
            extra_compile_args=extra_compile_args,
            extra_link_args=["-s"],
        ))
    return extensions


setup(
    name="torch_segments",
    version="1.2.0",
    python_requires=">=3.9",
    install_requires=[],
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)},
    packages=find_packages(),
)
