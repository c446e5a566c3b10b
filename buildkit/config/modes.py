"""The three wheel modes: one full wheel, or a library-only and a python-only wheel."""

from __future__ import annotations

import enum


class WheelMode(enum.Enum):
    FULL = "full"
    LIBRARY_ONLY = "library-only"
    PYTHON_ONLY = "python-only"
