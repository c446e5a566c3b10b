from .nbexample_ext import add, greet

__all__ = ["add", "greet"]
