"""Throw-away git checkouts, made the same way on every machine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from buildkit_testing.processes import run

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
# A fixed identity, and neither the user's nor the system's git configuration
# (signing, hooks, default branch) reaching the checkouts tests make.
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(folder: Path, *args: str) -> str:
    """`git ARGS` in ``folder`` with GIT_ENV; its output, stripped."""
    return run(["git", *args], cwd=folder, env={**os.environ, **GIT_ENV}).stdout.strip()


def commit_all(folder: Path, *, ignored_too: bool = False) -> str:
    """Make ``folder`` a git checkout whose one commit holds its files (those .gitignore
    names too with ``ignored_too``); returns the commit's hash."""
    git(folder, "init", "-q")
    git(folder, "add", *(["-f"] if ignored_too else []), "-A")
    git(folder, "commit", "-q", "-m", "init")
    return git(folder, "rev-parse", "HEAD")
