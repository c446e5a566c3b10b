# buildkit's own packaging is declared in pyproject.toml; this file exists for
# front ends and tools that still call `python setup.py ...`.
from setuptools import setup

setup()
