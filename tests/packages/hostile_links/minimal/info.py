"""`minimal-info`: print what was built."""

from . import __version__, build_flavour


def main() -> int:
    print(f"minimal {__version__} ({build_flavour()})")
    return 0
