"""The op libraries are loaded by their plain names, the cuda ones where built, as torch_scatter loads its own."""

import importlib.machinery
import os.path as osp

import torch

for library in ("_version", "_segment"):
    cuda_spec = importlib.machinery.PathFinder().find_spec(f"{library}_cuda", [osp.dirname(__file__)])
    spec = cuda_spec or importlib.machinery.PathFinder().find_spec(f"{library}_cpu", [osp.dirname(__file__)])
    if spec is None:
        raise ImportError(f"Could not find module '{library}_cpu' in {osp.dirname(__file__)}")
    torch.ops.load_library(spec.origin)

from .segment import segment_sum_csr  # noqa: E402

version_code = torch.ops.torch_segments.version_code()

__all__ = ["segment_sum_csr", "version_code"]
