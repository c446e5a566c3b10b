"""A src/-layout package whose extension is a nanobind module."""

from ._ext import twice

__all__ = ["twice"]
