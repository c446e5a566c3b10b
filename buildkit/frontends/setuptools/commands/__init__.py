"""setuptools commands, as thin adapters over buildkit's modules.

``cmdclass()`` is what ``buildkit.setup`` passes to setuptools; a project that
calls ``setuptools.setup`` itself can pass it too.  Importing this package
imports setuptools: the no-op ``buildkit develop`` never does.
"""

from __future__ import annotations

from buildkit.frontends.setuptools.commands.bdist_wheel import BdistWheel
from buildkit.frontends.setuptools.commands.build_ext import BuildExt
from buildkit.frontends.setuptools.commands.build_py import BuildPy
from buildkit.frontends.setuptools.commands.build_scripts import BuildScripts
from buildkit.frontends.setuptools.commands.clean import Clean
from buildkit.frontends.setuptools.commands.develop import Develop
from buildkit.frontends.setuptools.commands.editable_wheel import EditableWheel
from buildkit.frontends.setuptools.commands.egg_info import EggInfo
from buildkit.frontends.setuptools.commands.install import Install
from buildkit.frontends.setuptools.commands.sdist import Sdist


def cmdclass() -> dict[str, type]:
    return {
        "build_ext": BuildExt,
        "build_py": BuildPy,
        "build_scripts": BuildScripts,
        "develop": Develop,
        "editable_wheel": EditableWheel,
        "egg_info": EggInfo,
        "clean": Clean,
        "install": Install,
        "sdist": Sdist,
        "bdist_wheel": BdistWheel,
    }
