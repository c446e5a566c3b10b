# A torch_scatter-shaped project built with buildkit.torch: one op library per csrc/*.cpp,
# each with its csrc/cpu/<name>_cpu.cpp, found by globbing; plain module names
# (no_python_abi_suffix) loaded with torch.ops.load_library; OpenMP when torch has it;
# no pyproject.toml. Only the import differs from cpp_extension's setup.py.
import glob
import os
import os.path as osp
import sys

import torch
from setuptools import find_packages, setup
from torch.__config__ import parallel_info

from buildkit.torch import BuildExtension, CppExtension

if os.environ.get("DROPIN_SETUP_LOG"):  # the tests count the runs of this file
    with open(os.environ["DROPIN_SETUP_LOG"], "a") as log:
        log.write("ran\n")


def get_extensions():
    extensions = []
    extensions_dir = "csrc"
    for main in sorted(glob.glob(osp.join(extensions_dir, "*.cpp"))):
        name = osp.basename(main)[:-4]
        sources = [main]
        cpu = osp.join(extensions_dir, "cpu", f"{name}_cpu.cpp")
        if osp.exists(cpu):
            sources.append(cpu)
        extra_compile_args = {"cxx": ["-O3", "-Wno-sign-compare", "-DSEGMENTS_POISON"]}
        info = parallel_info()
        if "backend: OpenMP" in info and "OpenMP not found" not in info and sys.platform != "darwin":
            extra_compile_args["cxx"] += ["-DAT_PARALLEL_OPENMP", "-fopenmp"]
        extensions.append(CppExtension(
            f"torch_segments._{name}_cpu",
            sources,
            include_dirs=[extensions_dir],
            define_macros=[("WITH_PYTHON", None), ("SEGMENTS_VERSION_CODE", "7")],
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
