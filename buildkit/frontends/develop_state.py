"""What `buildkit develop` and `setup.py develop` share without importing setuptools:
the develop state, a fingerprint of what the ``_C`` stub and the editable registration
depend on besides the CMake build, so that a no-op develop skips setuptools entirely.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from buildkit._util.fileutil import read_json, write_json
from buildkit.builder.build_state import CMAKE_CACHE, DEVELOP_RECORD, INSTALL_MANIFEST, state_path
from buildkit.frontends.editable import find_installed, site_packages
from buildkit.package.layout import installed_module_path
from buildkit.project import Project


def inputs_fingerprint(project: Project, register: bool) -> str:
    """What the stub and the editable registration depend on, besides the CMake build.

    The registration's METADATA holds the README (the long description) and whatever
    setup.cfg declares, so both files count beside pyproject.toml and setup.py.
    """
    root = project.root
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "setup.py", "setup.cfg", project.settings.readme, project.settings.version_file):
        path = root / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-") + b"\0")
    stub = project.settings.extension
    for source in stub.sources if stub else ():
        path = root / source
        digest.update(f"{source}:{path.stat().st_mtime_ns if path.exists() else 0}".encode())
    cache = project.build_dir / CMAKE_CACHE
    digest.update(f"cache:{cache.stat().st_mtime_ns if cache.exists() else 0}".encode())
    # The registered top-level names and their folders: the layout's (a package that
    # [tool.setuptools]' packages.find or a setup.py's find_packages() finds in the package
    # root, a declared package's folder made or removed) and what CMake installed (wheel-root mode).
    layout = project.settings.layout
    tops = [(name, folder.as_posix(), (root / folder).is_dir()) for name, folder in layout.package_folders.items()]
    digest.update(repr((layout.package_root.as_posix(), tops, layout.py_modules)).encode())
    manifest = project.build_dir / INSTALL_MANIFEST
    digest.update(manifest.read_bytes() if manifest.is_file() else b"-")
    options = project.options
    digest.update(f"{sys.prefix}|{register}|{options.wheel_mode.value}".encode())
    digest.update(f"rebuild on import:{options.editable_rebuild}|{options.editable_verbose}".encode())
    digest.update(project.version.encode())
    return digest.hexdigest()


def _state_path(project: Project) -> Path:
    return Path(state_path(project.build_dir, DEVELOP_RECORD))


def is_current(project: Project, register: bool) -> bool:
    state = read_json(_state_path(project))
    if not isinstance(state, dict):
        return False
    outputs = [Path(p) for p in state.get("outputs", [])]
    # A develop's state serves a build too: its stub is the same, and it registered besides.
    served = {inputs_fingerprint(project, register), inputs_fingerprint(project, register=True)}
    return state.get("inputs") in served and all(p.exists() for p in outputs)


def record(project: Project, register: bool) -> None:
    stub = project.settings.extension
    outputs = [installed_module_path(project.target.package_root, stub.name)] if stub else []
    if register:
        normalized = re.sub(r"[-_.]+", "_", project.settings.project_name).lower()
        outputs.append(find_installed(normalized, site_packages()))
    write_json(_state_path(project), {"inputs": inputs_fingerprint(project, register),
                                      "outputs": [str(p) for p in outputs if p is not None]})
