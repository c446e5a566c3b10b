"""Running commands, and the environment a build under test gets."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# What would steer a build under test: buildkit's and CMake's options, the compilers'
# flags, pip's configuration, an active venv or PYTHONPATH, a build timestamp, and the
# test projects' own <PREFIX>_ variables.  A test sets the ones it means.  CUDACXX
# stays: it is how a machine without nvcc on PATH tells the CUDA tests where it is.
STEERING_PREFIXES = ("BUILD_", "USE_", "CMAKE_", "MAX_JOBS", "DEBUG", "REL_WITH_DEB_INFO", "VERBOSE", "PIP_",
                     "BUILDKIT_", "VIRTUAL_ENV", "PYTHONPATH", "SOURCE_DATE_EPOCH", "MINIMAL_", "CUDA_MINIMAL_",
                     "TENSORLET_")
# TORCH_CUDA_ARCH_LIST and CUDAARCHS too: a GPU machine's PyTorch image sets the first,
# and a variable's list outranks the project's own (a develop build then builds it whole).
STEERING_NAMES = {"CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CUDAFLAGS", "TORCH_CUDA_ARCH_LIST",
                  "CUDAARCHS"}


def run(command, cwd=None, env=None, check=True, timeout: float | None = 900, **kwargs) -> subprocess.CompletedProcess:
    """Run a command given as a list (paths welcome), capturing its output as text; with
    ``check``, a failure raises with the whole output."""
    result = subprocess.run([str(c) for c in command], cwd=cwd, env=env, text=True, capture_output=True,
                            timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"command failed ({result.returncode}): {command}\n--- stdout\n{result.stdout}"
                             f"\n--- stderr\n{result.stderr}")
    return result


def steering_free_env(**overrides: str) -> dict[str, str]:
    """This process's environment without the variables that would steer a build under
    test, plus ``overrides``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(STEERING_PREFIXES) and k not in STEERING_NAMES}
    env.update(overrides)
    return env


def clean_env(**overrides: str) -> dict[str, str]:
    """steering_free_env for a hermetic build: no compiler cache found on PATH joins in
    unless a test asks for one."""
    return steering_free_env(**{"BUILDKIT_COMPILER_LAUNCHER": "none", **overrides})


def setup_py(python: Path, project: Path, *args, env: dict[str, str] | None = None, check: bool = True,
             **run_options) -> subprocess.CompletedProcess:
    """`python setup.py ARGS` in ``project``, in ``env`` (clean_env() unless given)."""
    return run([python, "setup.py", *args], cwd=project, env=clean_env() if env is None else env, check=check,
               **run_options)


def unboxed(output: str) -> str:
    """Output with buildkit's plain boxes (ASCII frames, text wrapped to fit) turned back
    into running text, so a test can look for a phrase wherever the wrap fell."""
    words = []
    for line in output.splitlines():
        stripped = line.strip()
        if stripped.startswith("+-") and stripped.endswith("+"):
            continue
        if stripped.startswith("|") and stripped.endswith("|"):
            stripped = stripped[1:-1].strip()
        words.append(stripped)
    return " ".join(" ".join(words).split())


def squashed(text: str) -> str:
    """``text`` without white space: a long path in a message box is wrapped anywhere, so
    compare squashed text with a squashed expectation."""
    return "".join(text.split())


def hermetic(tmp_path: Path, **overrides: str) -> dict[str, str]:
    """clean_env with a HOME and TMPDIR of the test's own (``tmp_path``/home and /tmp, made
    here): nothing outside is written to on the side."""
    for name in ("home", "tmp"):
        (tmp_path / name).mkdir(exist_ok=True)
    return clean_env(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"), **overrides)
