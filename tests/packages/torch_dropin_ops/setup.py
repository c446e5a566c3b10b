# An extension-cpp-shaped project (TORCH_LIBRARY ops, one _C module for the stable ABI,
# a CUDA variant) that builds with buildkit.torch: its setup.py is cpp_extension's, with
# only the import changed. DROPIN_CUDA=1 builds the CUDAExtension (tests/test_torch_dropin.py).
import glob
import os

import torch
from setuptools import find_packages, setup

from buildkit.torch import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

if os.environ.get("DROPIN_SETUP_LOG"):  # the tests count the runs of this file
    with open(os.environ["DROPIN_SETUP_LOG"], "a") as log:
        log.write("ran\n")


PY_LIMITED_API = torch.__version__ >= "2.6.0"  # as extension-cpp decides it


def extensions():
    use_cuda = os.environ.get("DROPIN_CUDA", "0") == "1" and CUDA_HOME is not None
    sources = sorted(glob.glob(os.path.join("dropin_ops", "csrc", "*.cpp")))
    if use_cuda:
        sources += sorted(glob.glob(os.path.join("dropin_ops", "csrc", "cuda", "*.cu")))
    kind = CUDAExtension if use_cuda else CppExtension
    compile_args = {"cxx": ["-O2", "-fdiagnostics-color=always"], "nvcc": ["-O2", "-rdc=true"]}
    options = {}
    if use_cuda and os.environ.get("DROPIN_DLINK") == "plain":
        compile_args["nvcc_dlink"] = []  # device linking without link-time optimization
    elif use_cuda:
        options["dlink"] = True  # device linking with -dlto (a toolkit with nvJitLink's LTO)
    return [kind(
        "dropin_ops._C",
        sources,
        extra_compile_args=compile_args,
        extra_link_args=[],
        py_limited_api=PY_LIMITED_API,
        **options,
    )]


setup(
    name="dropin_ops",
    version="0.1.0",
    packages=find_packages(),
    ext_modules=extensions(),
    install_requires=["torch"],
    cmdclass={"build_ext": BuildExtension},
    options={"bdist_wheel": {"py_limited_api": "cp39"}} if PY_LIMITED_API else {},
)
