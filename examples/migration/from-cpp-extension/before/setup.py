# BEFORE (never built): a torch.utils.cpp_extension build. setuptools compiles every
# source itself, .cu files through nvcc, into one extension module.
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# TORCH_CUDA_ARCH_LIST="7.5;8.0;9.0+PTX" picks the architectures (read by cpp_extension).
setup(
    name="cuext",
    version="0.1.0",
    packages=["cuext"],
    ext_modules=[
        CUDAExtension(
            name="cuext._C",
            sources=["csrc/cuext.cpp", "csrc/scale_add_kernel.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]},
        )
    ],
    # Ninja is used when installed, but every `pip install`/`setup.py develop` re-runs
    # setuptools' whole build, and a build folder in a temporary directory starts cold.
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=os.getenv("USE_NINJA", "1") == "1")},
)
