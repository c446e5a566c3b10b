"""buildkit's test package for CUDA from NVIDIA's wheels: the generated loader preloads the
CUDA runtime and cuRAND from wherever their wheels are installed, then the extension loads."""

from cuda_from_wheels import _native

_native.load()

from cuda_from_wheels._core import curand_generate, curand_version, launch, runtime_version, toolkit_version  # noqa: E402

__all__ = ["curand_generate", "curand_version", "launch", "runtime_version", "toolkit_version"]
