"""setuptools commands, as thin adapters over buildkit's modules.

``cmdclass()`` is what ``buildkit.setup`` passes to setuptools; a project that
calls ``setuptools.setup`` itself can pass it too.  Nothing here imports setuptools
at import time: the CLI's no-op path must not pay for it.
"""

from __future__ import annotations

def cmdclass() -> dict[str, type]:
    from .bdist_wheel import BdistWheel
    from .build_ext import BuildExt
    from .clean import Clean
    from .develop import Develop
    from .egg_info import EggInfo
    from .install import Install
    from .sdist import Sdist

    return {
        "build_ext": BuildExt,
        "develop": Develop,
        "egg_info": EggInfo,
        "clean": Clean,
        "install": Install,
        "sdist": Sdist,
        "bdist_wheel": BdistWheel,
    }
