"""Reads what CMake installed beside it."""

import ctypes
from importlib.resources import files


def text(name: str) -> str:
    return files(__name__).joinpath(name).read_text().strip()


def plain_answer() -> int:
    return ctypes.CDLL(str(files(__name__).joinpath("libplain.so"))).plain_answer()
