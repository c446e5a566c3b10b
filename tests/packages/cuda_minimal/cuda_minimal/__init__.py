"""cuda_minimal: buildkit's CUDA example, a saxpy kernel with a CPU fallback."""

from __future__ import annotations

from typing import Sequence

from . import _C

try:
    from .version import __version__
except ImportError:  # not built yet
    __version__ = "0+unknown"

__all__ = ["saxpy", "cuda_available", "cuda_status", "compiled_architectures", "built_with_cuda", "__version__"]


def saxpy(a: float, x: Sequence[float], y: Sequence[float], *, device: str = "auto") -> list[float]:
    """``a * x + y`` in float32: on the GPU when one is usable (``device="auto"``), else on the
    CPU. ``device="cuda"`` raises RuntimeError with CUDA's message when the GPU can't run it."""
    result, _backend = _C.saxpy(float(a), x, y, device)
    return result


def cuda_available() -> bool:
    """Whether a CUDA device can be used; False without a GPU or a driver (never raises)."""
    return _C.cuda_available()


def cuda_status() -> str:
    """``"ok"``, or why no CUDA device can be used (CUDA's own error text)."""
    return _C.cuda_status()


def compiled_architectures() -> str:
    """The ``CMAKE_CUDA_ARCHITECTURES`` the library was compiled for (``"75-real;80"``);
    empty when it was built without CUDA."""
    return _C.compiled_architectures()


def built_with_cuda() -> bool:
    return _C.built_with_cuda()
