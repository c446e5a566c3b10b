"""buildkit's test package for CUDA from NVIDIA's wheels: the generated loader preloads the
CUDA runtime and NVIDIA's libraries from wherever their wheels are installed, then the
extension loads."""

from cuda_from_wheels import _native

_native.load()

from cuda_from_wheels._core import *  # noqa: E402, F403
