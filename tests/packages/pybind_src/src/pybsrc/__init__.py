"""pybsrc: a pybind11 extension inside a src/ layout package."""

from pybsrc._core import add, built_with

__all__ = ["add", "built_with"]
