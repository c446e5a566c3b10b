"""setuptools' ``finalize_distribution_options`` hook: a buildkit.torch wheel requires the torch
it is built against.

pip and uv ask the backend for a wheel's metadata before they build it (setuptools'
``dist_info``), and setuptools' bdist_wheel then copies that metadata into the wheel: a
requirement the build added would never reach it.  So the pin is made when setuptools
finalizes the distribution, before any command runs: ``torch==<the installed version>``
(public, without a local label such as ``+cpu``), in place of the project's own ``torch``
requirement, for every command that makes metadata or a wheel: not for ``sdist`` (a release
artifact, built against nothing yet) nor an in-place build (``build_ext --inplace``, what
``buildkit develop`` runs, and ``develop``).  NVIDIA's CUDA runtime wheels come with that
torch: its own requirements pin them.

buildkit's pyproject.toml registers the hook, so it runs for every setuptools project of
an environment where buildkit is installed: it imports nothing of buildkit's until it has
seen an extension of ``buildkit.torch`` in ``ext_modules``.
"""

from __future__ import annotations

import sys
from typing import Any

UNPINNED = frozenset({"sdist", "--inplace", "-i", "develop"})  # setup.py's words that make no wheel metadata


def pin_torch(distribution: Any) -> None:
    """The hook (setuptools passes the distribution it finalizes)."""
    extensions = getattr(distribution, "ext_modules", None) or ()
    if not any(getattr(ext, "buildkit_torch", False) for ext in extensions) or UNPINNED & set(sys.argv[1:]):
        return
    # What pins it (importlib.metadata, packaging, buildkit's configuration) loads only here:
    # every other setuptools project of the environment runs this hook too.
    from buildkit.errors import reporting_errors

    reporting_errors(lambda: _pin(distribution))


def _pin(distribution: Any) -> None:
    from buildkit.builder.configure.torch_env import installed_torch
    from buildkit.config.drop_in import TORCH
    from buildkit.package.dependencies import find_dependency, pinned_requirements

    if installed_torch() is None:
        return  # BuildExtension stops with the reason; metadata alone (egg_info) needs no torch
    pin = find_dependency(TORCH, project=distribution.get_name()).requirement()
    requirements = pinned_requirements([str(r) for r in distribution.install_requires or []], [pin])
    distribution.install_requires = requirements
    distribution.metadata.install_requires = requirements
