"""PEP 517 / PEP 660 backend: ``build-backend = "buildkit.build_meta"``.

It is setuptools' backend with two changes: buildkit's config settings (``pip
install -C USE_CUDA=0 .``, ``python -m build -C build-type=Debug``) become the
highest-precedence option layer, and the ``prepare_metadata_for_*`` hooks are not
offered, because metadata (console scripts, optional subpackages) depends on the
CMake configuration and must come from the built wheel itself.
"""

from __future__ import annotations

from typing import Any, Mapping

from setuptools import build_meta as _setuptools

from buildkit.config.options import config_settings_scope

# Keys setuptools understands itself; everything else is buildkit's.
SETUPTOOLS_KEYS = frozenset({"--build-option", "--global-option", "editable_mode", "editable-mode"})


def _split(config_settings: Mapping[str, Any] | None) -> tuple[dict | None, dict]:
    settings = dict(config_settings or {})
    ours = {k: v for k, v in settings.items() if k not in SETUPTOOLS_KEYS}
    theirs = {k: v for k, v in settings.items() if k in SETUPTOOLS_KEYS} or None
    return theirs, ours


def _call(hook, config_settings, *args):
    theirs, ours = _split(config_settings)
    with config_settings_scope(ours):
        return hook(*args, config_settings=theirs)


def get_requires_for_build_wheel(config_settings=None):
    return _call(_setuptools.get_requires_for_build_wheel, config_settings)


def get_requires_for_build_sdist(config_settings=None):
    return _call(_setuptools.get_requires_for_build_sdist, config_settings)


def get_requires_for_build_editable(config_settings=None):
    return _call(_setuptools.get_requires_for_build_editable, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    theirs, ours = _split(config_settings)
    with config_settings_scope(ours):
        return _setuptools.build_wheel(wheel_directory, theirs)


def build_sdist(sdist_directory, config_settings=None):
    return _call(_setuptools.build_sdist, config_settings, sdist_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    theirs, ours = _split(config_settings)
    with config_settings_scope(ours):
        return _setuptools.build_editable(wheel_directory, theirs)
