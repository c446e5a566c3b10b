"""Test utilities shared by buildkit's tests (tests/) and tensorlet's (examples/tensorlet/test).

pytest finds this package through the `pythonpath` setting of both pytest
configurations (the repository's pyproject.toml and examples/tensorlet's), so no
test file edits sys.path.  One module a concern:

* ``paths``: where the repository, the user examples and the test packages are;
* ``processes``: running commands, the environment a build under test gets, ``setup.py``;
* ``venvs``: venvs to build and install in, and the run's local wheelhouse;
* ``projects``: copies of project sources without build outputs, files written from a table;
* ``artifacts``: what a build produced: the one wheel of a folder, file digests;
* ``cuda``: finding nvcc and cuobjdump, the marks of CUDA builds, a library's device images;
* ``git``: throw-away git checkouts with a hermetic identity.

The name `buildkit` on the public index belongs to another project, so every venv a
test makes installs from the local wheelhouse with ``--no-index`` only.
"""
