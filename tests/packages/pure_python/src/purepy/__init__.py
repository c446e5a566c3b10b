"""A pure-Python package that buildkit builds without CMake."""

from importlib.resources import files

from purepy._version import __version__


def greeting() -> str:
    return files(__name__).joinpath("data", "greeting.txt").read_text(encoding="utf-8").strip()


def main() -> None:
    print(f"purepy {__version__}: {greeting()}")
