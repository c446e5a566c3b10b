"""The user examples build as their READMEs say: each once, from a copy, with the
README's build command, then imported from a neutral folder with its one-line check.

This is the only place buildkit's tests build examples/minimal and examples/cuda_minimal
(the other tests build their copies in tests/packages/); examples/migration has
tests/test_migration_examples.py, and examples/tensorlet its own test tree.
cuda_minimal is compiled for one architecture and needs no GPU: without one, saxpy
falls back to the CPU.
"""

from __future__ import annotations

import pytest

from buildkit_testing.cuda import CUDA_BUILD_MARKS, CUDA_MINIMAL_ARCH_VAR
from buildkit_testing.processes import clean_env, run, setup_py
from buildkit_testing.projects import copy_example
from buildkit_testing.venvs import overlay_venv

# example -> (the README's build variables, its check, what the check prints)
README_RUNS = {
    "minimal": ({}, "import minimal; print(minimal.sum([1, 2, 3]))", "6.0"),
    "cuda_minimal": ({CUDA_MINIMAL_ARCH_VAR: "8.0"}, "import cuda_minimal as c; print(c.saxpy(2, [1, 2], [3, 4]))",
                     "[5.0, 8.0]"),
}


@pytest.mark.parametrize("example", [pytest.param("minimal", marks=pytest.mark.slow),
                                     pytest.param("cuda_minimal", marks=CUDA_BUILD_MARKS)])
def test_example_builds_as_its_readme_says(example, tmp_path):
    variables, check, printed = README_RUNS[example]
    project = copy_example(example, tmp_path / example)
    python = overlay_venv(tmp_path / "venv")
    setup_py(python, project, "develop", env=clean_env(**variables))
    neutral = tmp_path / "elsewhere"
    neutral.mkdir()
    assert run([python, "-c", check], cwd=neutral, env=clean_env()).stdout.strip() == printed
