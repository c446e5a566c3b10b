"""Importing _C runs its TORCH_LIBRARY registrations (the module has no functions)."""

import torch

from . import _C  # noqa: F401
from .ops import muladd, scale_rows

__all__ = ["muladd", "scale_rows"]
