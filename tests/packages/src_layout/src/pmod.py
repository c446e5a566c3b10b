"""A top-level pure-Python module beside the package."""


def greeting() -> str:
    return "hello from pmod"
