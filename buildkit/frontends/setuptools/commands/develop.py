"""``develop``: build in place and register the editable install once, in-process.

setuptools >= 80 forwards ``setup.py develop`` to ``pip install -e .`` with build
isolation, which records a ninja from a throw-away environment in the CMake cache
and breaks the next run.  This command never leaves the current interpreter.
"""

from __future__ import annotations

from importlib import metadata
from typing import ClassVar

from packaging.requirements import Requirement
from setuptools import Command

from buildkit._util import console
from buildkit.frontends import develop_state, editable
from buildkit.frontends.setuptools.commands.editable_wheel import rebuild_hook
from buildkit.frontends.setuptools.distribution import project_of


class Develop(Command):
    description = "build in place and register an editable install (no pip, no build isolation)"
    user_options: ClassVar[list[tuple[str, str | None, str]]] = [
        ("uninstall", "u", "remove the editable install"),
        ("no-deps", "N", "accepted for compatibility: dependencies are never installed by develop"),
    ]
    boolean_options: ClassVar[list[str]] = ["uninstall", "no-deps"]

    def initialize_options(self) -> None:
        self.uninstall = False
        self.no_deps = False

    def finalize_options(self) -> None:
        pass

    def run(self) -> None:
        project = project_of(self.distribution)
        spec = editable.spec_from_distribution(self.distribution, project.root, rebuild_hook(project))
        if self.uninstall:
            info = editable.find_installed(spec.normalized, editable.site_packages())
            if info is not None:
                editable.remove_recorded(info, editable.site_packages())
                console.info(f"removed the editable install of {spec.name}")
            return
        self.reinitialize_command("build_ext", inplace=1)
        self.run_command("build_ext")
        project.write_generated_files()
        editable.register(spec)
        requirements: list[str] | None = getattr(self.distribution, "install_requires", None)  # not in the stubs
        _warn_missing_requirements(requirements or [])
        develop_state.record(project, register=True)


def _warn_missing_requirements(requirements: list[str]) -> None:
    missing = []
    for text in requirements:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate():
            continue
        try:
            installed = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if req.specifier and not req.specifier.contains(installed, prereleases=True):
            missing.append(f"{text} (installed: {installed})")
    if missing:
        console.warn("develop does not install dependencies; missing: " + ", ".join(missing)
                     + ". Install them with pip.")
