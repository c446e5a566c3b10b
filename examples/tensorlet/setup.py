# All configuration lives in pyproject.toml ([tool.buildkit]).
from buildkit import setup

setup()
