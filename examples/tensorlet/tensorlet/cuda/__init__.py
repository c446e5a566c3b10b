"""CUDA status. libtensorlet_cuda is loaded only when present; without it (or
without a GPU) everything here reports "unavailable" and nothing fails."""

from __future__ import annotations

import ctypes

from .. import _libraries


def _device_count() -> int:
    lib = _libraries.cuda
    if lib is None:
        return 0
    try:
        fn = lib.tensorlet_cuda_device_count
    except AttributeError:
        return 0
    fn.restype = ctypes.c_int
    return max(int(fn()), 0)


def is_built() -> bool:
    """Whether libtensorlet_cuda.so was loaded."""
    return _libraries.cuda is not None


def is_available() -> bool:
    """True when the CUDA library is loaded and cudaGetDeviceCount reports a device."""
    return _device_count() > 0


def device_count() -> int:
    return _device_count()


def _library():
    if _libraries.cuda is None or not is_available():
        raise RuntimeError(f"CUDA is not available ({_libraries.cuda_error or 'no CUDA device'})")
    return _libraries.cuda


def get_device_name() -> str:
    """The current CUDA device's name, as the driver reports it."""
    fn = _library().tensorlet_cuda_device_name
    fn.restype = ctypes.c_char_p
    return fn().decode()


def synchronize() -> None:
    """Wait until every queued CUDA kernel and copy has finished (kernels are
    asynchronous: timing them, or seeing their errors, needs this)."""
    fn = _library().tensorlet_cuda_synchronize
    fn.restype = ctypes.c_char_p
    error = fn()
    if error is not None:
        raise RuntimeError(f"CUDA error: {error.decode()}")
