"""The PEP 517 / PEP 660 backend's public name: ``build-backend = "buildkit.build_meta"``.

The hooks live in :mod:`buildkit.frontends.pep517`; this name is what projects
write in their ``pyproject.toml`` and stays.
"""

from buildkit.frontends.pep517 import (
                                       build_editable,
                                       build_sdist,
                                       build_wheel,
                                       get_requires_for_build_editable,
                                       get_requires_for_build_sdist,
                                       get_requires_for_build_wheel,
)

__all__ = ["build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable",
           "get_requires_for_build_sdist", "get_requires_for_build_wheel"]
