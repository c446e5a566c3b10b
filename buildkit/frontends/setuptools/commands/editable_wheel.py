"""``editable_wheel`` (``pip install -e .``) that carries buildkit's import hooks.

With ``editable-rebuild`` on, the editable wheel gets the rebuild hook's module and ``.pth``
file at its root, beside setuptools' own finder (:func:`buildkit.frontends.editable.rebuild_hook_files`).
A build that links NVIDIA's CUDA runtime or library wheels gets the hook that preloads them
before the first import (:func:`buildkit.frontends.editable.preload_hook_files`), as its
binaries name no folder of the build's environment.  Every other wheel is left as setuptools
makes it.  setuptools writes what its build steps put into the unpacked wheel's folder into
the wheel; the hooks go there once they are done.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import setuptools
from setuptools.command.editable_wheel import editable_wheel as _editable_wheel

from buildkit._util import console
from buildkit.errors import BuildkitError
from buildkit.frontends import editable
from buildkit.frontends.setuptools.distribution import project_of

if TYPE_CHECKING:
    from _typeshed import StrPath

    from buildkit.project import Project

# setuptools' step that fills the unpacked wheel's folder (setuptools 64 and later).
BUILD_STEP = "_run_build_commands"
# The options the hook itself takes from this install.
EDITABLE_OPTIONS = frozenset({"editable_rebuild", "editable_verbose"})


def rebuild_hook(project: Project) -> editable.RebuildHook | None:
    """What an editable install of ``project`` needs to rebuild on import; None without
    ``editable-rebuild``."""
    options = project.options
    return editable.RebuildHook(project.build_dir, options.editable_verbose) if options.editable_rebuild else None


class EditableWheel(_editable_wheel):
    def run(self) -> None:
        if rebuild_hook(project_of(self.distribution)) is not None and not hasattr(_editable_wheel, BUILD_STEP):
            raise BuildkitError(
                f"editable-rebuild cannot add its hook to an editable wheel of setuptools {setuptools.__version__}, "
                f"which has no {BUILD_STEP} step (setuptools 64 to 84 have it).",
                "Install a setuptools that has it, or turn editable-rebuild off and rebuild with `buildkit build`.")
        super().run()
        if not hasattr(_editable_wheel, BUILD_STEP) and project_of(self.distribution).editable_preload_loader():
            raise BuildkitError(
                f"the editable install of {self.distribution.get_name()} needs its hook that preloads NVIDIA's "
                f"libraries (its binaries name no folder of the build's environment), but setuptools "
                f"{setuptools.__version__} has no {BUILD_STEP} step to add it to the editable wheel (setuptools 64 "
                "to 84 have it).",
                "Install a setuptools that has it, or build in place with `buildkit develop`.")

    def _run_build_commands(self, dist_name: str, unpacked_wheel: StrPath, build_lib: StrPath,
                            tmp_dir: StrPath) -> tuple[list[str], dict[str, str]]:
        built: tuple[list[str], dict[str, str]] = super()._run_build_commands(  # type: ignore[misc]  # private, not in the stubs
            dist_name, unpacked_wheel, build_lib, tmp_dir)
        project = project_of(self.distribution)
        hook, loader = rebuild_hook(project), project.editable_preload_loader()
        if hook is None and not loader:
            return built
        spec = editable.spec_from_distribution(self.distribution, project.root, hook)
        if hook is not None:
            for name, text in editable.rebuild_hook_files(spec).items():
                (Path(unpacked_wheel) / name).write_text(text, encoding="utf-8")
            console.info(f"the editable install of {spec.name} rebuilds what changed when imported (editable-rebuild)")
            _say_unused_config_settings(project)
        if loader:
            for name, text in editable.preload_hook_files(spec, loader).items():
                (Path(unpacked_wheel) / name).write_text(text, encoding="utf-8")
            console.info(f"the editable install of {spec.name} preloads NVIDIA's libraries it links at its first "
                         "import, from where their wheels are installed (its binaries name no folder of the "
                         "build's environment)")
        return built


def _say_unused_config_settings(project: Project) -> None:
    """A rebuild on import is ``buildkit build``: the importing environment and [tool.buildkit]
    give its options, not this install's config settings."""
    options = project.options
    given = sorted(options.variable_names.get(name) or name.removeprefix("-D") for name, source
                   in options.sources.items() if source == "config setting" and name not in EDITABLE_OPTIONS)
    if given:
        console.warn(f"a rebuild on import of {project.settings.project_name} reads its options as `buildkit build` "
                     f"does, from the environment and [tool.buildkit]: the config settings {', '.join(given)} of "
                     "this install are not used then (one that changes the build configures again). Set them "
                     "in [tool.buildkit] or in the environment to keep them.")
