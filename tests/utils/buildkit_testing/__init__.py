"""Test utilities shared by buildkit's tests (tests/) and tensorlet's (examples/tensorlet/test).

The package is installed editable from tests/utils (distribution ``buildkit-testing``,
by the README's first command and .ci/run), so neither a test file nor a benchmark
script edits sys.path; examples/tensorlet's pytest configuration also names the
folder, for a checkout set up without it.  One module a concern:

* ``paths``: where the repository, the user examples and the test packages are;
* ``processes``: running commands, the environment a build under test gets, ``setup.py``;
* ``venvs``: venvs to build and install in, and the run's local wheelhouse;
* ``projects``: copies of project sources without build outputs, files written from a table;
* ``artifacts``: what a build produced: the one wheel of a folder, file digests;
* ``cuda``: finding nvcc and cuobjdump, the marks of CUDA builds, a library's device images;
* ``git``: throw-away git checkouts with a hermetic identity;
* ``benchmark_project``: the generated N-file benchmark project (benchmarks and tests);
* ``timing``: a command timed, its median over runs, the edit made before each (benchmarks);
* ``compiler_cache``: sccache servers sharing a private Redis, a timed clean build.
* ``dist_cluster``: a pinned sccache in a private folder, ``buildkit dist-cluster`` as a local cluster.

The name `buildkit` on the public index belongs to another project, so every venv a
test makes installs from the local wheelhouse with ``--no-index`` only.
"""
