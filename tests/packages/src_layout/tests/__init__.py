"""Tests of the package; not part of it, and not importable after an editable install."""
