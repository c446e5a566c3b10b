"""buildkit's test package linking only NVIDIA's CUDA runtime: no loader of its own."""

from cuda_runtime_only._core import runtime_version  # noqa: F401
