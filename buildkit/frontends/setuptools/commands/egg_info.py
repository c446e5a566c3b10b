"""``egg_info`` that keeps setuptools' metadata folder in the build folder.

A ``<name>.egg-info`` in the project root sits on ``sys.path`` of an editable
install and counts as an installed distribution there: a library-only build's
``libfoo.egg-info`` would shadow the real library wheel.
"""

from __future__ import annotations

import os

from setuptools.command.egg_info import egg_info as _egg_info

from buildkit.frontends.setuptools.distribution import project_of


class EggInfo(_egg_info):
    def finalize_options(self) -> None:
        if self.egg_base is None:
            project = project_of(self.distribution)
            folder = project.build_dir / "egg-info"
            folder.mkdir(parents=True, exist_ok=True)  # only now: `setup.py --help` creates nothing
            self.egg_base = os.path.relpath(folder, project.root)
        super().finalize_options()
