import torch


def muladd(a: torch.Tensor, b: torch.Tensor, c: float) -> torch.Tensor:
    return torch.ops.dropin_ops.muladd.default(a, b, c)


def scale_rows(x: torch.Tensor, factors: torch.Tensor) -> torch.Tensor:
    return torch.ops.dropin_ops.scale_rows.default(x, factors)
