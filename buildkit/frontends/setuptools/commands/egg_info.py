"""``egg_info`` that keeps setuptools' metadata folder in the build folder.

A ``<name>.egg-info`` in the project root sits on ``sys.path`` of an editable
install and counts as an installed distribution there: a library-only build's
``libfoo.egg-info`` would shadow the real library wheel.

A library-only distribution also gets its discovery entry points here
(``cmake.prefix``, ``pkg_config``): from the files its package ships (its
``package_data``, which buildkit made from the staged package, so the staged tree is
not walked again on every egg_info), and whether or not ``[project]`` lists entry
points as dynamic, since buildkit, not the project, declares them.
"""

from __future__ import annotations

import os

from setuptools.command.egg_info import egg_info as _egg_info

from buildkit._util import console
from buildkit.builder.build_state import EGG_INFO
from buildkit.config.modes import WheelMode
from buildkit.frontends.setuptools.distribution import project_of
from buildkit.package.discovery import entry_points, library_folders
from buildkit.package.split import library_package


class EggInfo(_egg_info):
    # Set while bdist_wheel installs into its folder: the wheel has no SOURCES.txt (bdist_wheel
    # leaves it out of the .dist-info), and with include_package_data off nothing else reads
    # the list, which names every installed header (8,000 files in 0.06-0.12 s).
    for_wheel_only = False

    def find_sources(self) -> None:
        if self.for_wheel_only and not self.distribution.include_package_data:
            console.detail("egg_info: SOURCES.txt not listed for the wheel, which leaves it out")
            return
        super().find_sources()

    def finalize_options(self) -> None:
        if self.egg_base is None:
            project = project_of(self.distribution)
            project.claim_build_folder()  # the first file of a PEP 517 build lands here
            folder = project.build_dir / EGG_INFO
            folder.mkdir(parents=True, exist_ok=True)  # only now: `setup.py --help` creates nothing
            self.egg_base = os.path.relpath(folder, project.root)
        super().finalize_options()

    def run(self) -> None:
        project = project_of(self.distribution)
        if project.mode is WheelMode.LIBRARY_ONLY:
            package = library_package(project.settings.library_distribution)
            files = (self.distribution.package_data or {}).get(package, [])
            declared: dict[str, list[str]] | None = getattr(self.distribution, "entry_points", None)  # not in the stubs
            points = dict(declared or {})
            for group, entries in entry_points(package, library_folders(files)).items():
                points[group] = sorted({*points.get(group, []), *entries})
            self.distribution.entry_points = points  # type: ignore[attr-defined]  # setup()'s keyword, not in the stubs
        super().run()
