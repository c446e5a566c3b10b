# buildkit's flow runs from setup.py; everything is declared in pyproject.toml.
from buildkit import setup

setup()
