"""cuda_minimal (buildkit's CUDA test package): saxpy on the GPU, or on the CPU when none is usable."""

from __future__ import annotations

from . import _C
from ._C import built_with_cuda, compiled_architectures, cuda_available, cuda_status

try:
    from .version import __version__
except ImportError:  # not built yet
    __version__ = "0+unknown"

__all__ = ["saxpy", "cuda_available", "cuda_status", "compiled_architectures", "built_with_cuda", "__version__"]


def saxpy(a, x, y, *, device="auto"):
    """``a * x + y`` in float32 as a list; ``device="cuda"`` raises RuntimeError naming the failed CUDA call."""
    return _C.saxpy(float(a), x, y, device)[0]
