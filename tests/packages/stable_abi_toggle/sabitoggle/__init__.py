"""A module built with or without the stable ABI (tests of stale in-place modules)."""
