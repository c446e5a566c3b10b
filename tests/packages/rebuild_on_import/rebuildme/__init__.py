"""The rebuild-on-import test package: answer() is what csrc/answer.cpp returns."""

from rebuildme._native import answer

__all__ = ["answer"]
