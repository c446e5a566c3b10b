"""The Python side of the src-layout test package."""

from importlib.resources import files

from ._core import triple


def built_with() -> str:
    return files(__name__).joinpath("built_with.txt").read_text().strip()


__all__ = ["triple", "built_with"]
