"""tensorlet: a small PyTorch -- tensors, a dispatcher, autograd, CPU (and CUDA) kernels."""

from __future__ import annotations

from . import _loader

_libraries = _loader.load()

try:
    from . import _C
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError(f"tensorlet: the extension module tensorlet._C failed to load ({e}). The native libraries were "
                      f"found in {_libraries.lib_dir}; rebuild or reinstall tensorlet.") from e

__version__ = _loader.package_version()

from ._C import (  # noqa: E402,A004
    bool,
    dtype,  # noqa: E402
    float32,
    float64,
    int32,
    int64,
    uint8,
)

float = float32  # noqa: A001 - torch's aliases
double = float64
long = int64
int = int32  # noqa: A001

from . import _functions  # noqa: E402
from ._device import device  # noqa: E402
from ._tensor import Tensor  # noqa: E402
from .autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402

# Every generated function (tensorlet.add, tensorlet.mm, ...), with factories
# wrapped to accept requires_grad=.
for _name in _C._generated_function_names:
    globals()[_name] = _functions.public_function(_name)
del _name

from . import autograd, cuda, ops, utils  # noqa: E402,F401
from ._functions import from_numpy, is_tensor, manual_seed, tensor  # noqa: E402

__all__ = ["Tensor", "tensor", "from_numpy", "manual_seed", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "device", "dtype", "bool", "uint8", "int32", "int64", "float32", "float64",
           *_C._generated_function_names]
