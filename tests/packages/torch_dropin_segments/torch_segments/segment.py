import torch


def segment_sum_csr(src: torch.Tensor, indptr: torch.Tensor) -> torch.Tensor:
    """out[i] = src[indptr[i]:indptr[i + 1]].sum(0)"""
    return torch.ops.torch_segments.segment_sum_csr(src, indptr)
