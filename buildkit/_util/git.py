"""What git says about a project folder: tracked files, and whether it is a checkout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def run_git(root: Path, *args: str) -> list[str] | None:
    """``git <args> -z`` entries, or None when git is missing or this is no checkout."""
    try:
        done = subprocess.run(["git", *args, "-z"], cwd=root, capture_output=True, check=False)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return [entry for entry in os.fsdecode(done.stdout).split("\0") if entry]


def tracked_files(root: Path) -> list[str] | None:
    """Files git tracks under ``root`` (posix, relative), or None outside a checkout."""
    files = run_git(root, "ls-files", "--recurse-submodules")
    return files if files is not None else run_git(root, "ls-files")


def inside_checkout(root: Path) -> bool:
    return any((folder / ".git").exists() for folder in (root, *root.parents))
