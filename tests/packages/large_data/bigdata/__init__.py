"""A package whose lib/ holds one large installed file (tests/test_editable_large_files.py)."""
