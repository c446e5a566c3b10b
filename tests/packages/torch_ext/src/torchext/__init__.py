"""torch first: it loads libtorch, libc10 and libtorch_python, which the extensions link."""

from pathlib import Path

import torch

from torchext._C import add_one, cxx_standard

[_OPS] = Path(__file__).parent.glob("*torchext_ops*")
torch.ops.load_library(str(_OPS))


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    return torch.ops.torchext.scale(x, factor)


__all__ = ["add_one", "cxx_standard", "scale"]
