# Everything is declared in pyproject.toml's [tool.buildkit] table.
from buildkit import setup

setup()
