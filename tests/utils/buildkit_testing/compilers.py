"""C++ compilers besides the default one, for the tests that build with each."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path


def find_clang() -> str | None:
    """clang++ on PATH, else the newest versioned one (Debian's clang-19 package installs
    only clang++-19); None where there is none (.ci/run installs Debian's clang)."""
    found = shutil.which("clang++")
    if found:
        return found
    versioned = [(int(match.group(1)), str(path)) for folder in os.get_exec_path() if os.path.isdir(folder)
                 for path in Path(folder).glob("clang++-*") if (match := re.fullmatch(r"clang\+\+-(\d+)", path.name))]
    return max(versioned)[1] if versioned else None
