"""``buildkit develop`` / ``buildkit build``: the fast path of the edit-compile loop.

A no-op must cost little more than Python's start and a ninja no-op: the CMake
driver decides nothing needs configuring, ninja finds nothing to do, and a small
state file says the ``_C`` stub and the editable registration are current.  Only
when something changed is setuptools imported and the project's ``setup.py`` run
in-process.
"""

from __future__ import annotations

import hashlib
import json
import os
import runpy
import sys
from pathlib import Path

from .project import Project

STATE_FILE = ".buildkit/develop.json"


def inputs_fingerprint(project: Project, register: bool) -> str:
    """What the stub and the editable registration depend on, besides the CMake build."""
    root = project.root
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "setup.py", project.settings["version-file"]):
        path = root / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-") + b"\0")
    spec = project.settings["extension"] or {}
    for source in spec.get("sources", []):
        path = root / source
        digest.update(f"{source}:{path.stat().st_mtime_ns if path.exists() else 0}".encode())
    cache = project.build_dir / "CMakeCache.txt"
    digest.update(f"cache:{cache.stat().st_mtime_ns if cache.exists() else 0}".encode())
    digest.update(f"{sys.prefix}|{register}|{project.options.wheel_mode.value}".encode())
    digest.update(project.version.encode())
    return digest.hexdigest()


def _state_path(project: Project) -> Path:
    return project.build_dir / STATE_FILE


def is_current(project: Project, register: bool) -> bool:
    path = _state_path(project)
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    outputs = [Path(p) for p in state.get("outputs", [])]
    return state.get("inputs") == inputs_fingerprint(project, register) and all(p.exists() for p in outputs)


def record(project: Project, register: bool) -> None:
    from .commands.build_ext import installed_module_path

    spec = project.settings["extension"] or {}
    outputs = [installed_module_path(project.root, spec["name"])] if spec.get("name") else []
    if register:
        from .editable import find_installed, site_packages

        import re

        outputs.append(find_installed(re.sub(r"[-_.]+", "_", project.settings.project_name).lower(), site_packages()))
    path = _state_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"inputs": inputs_fingerprint(project, register),
                               "outputs": [str(p) for p in outputs if p is not None]}))
    os.replace(tmp, path)


def run_setup_command(root: Path, arguments: list[str]) -> None:
    """Run the project's setup.py in this process, as ``python setup.py <arguments>`` would."""
    setup_py = root / "setup.py"
    saved_argv, saved_cwd = sys.argv[:], os.getcwd()
    sys.argv = [str(setup_py), *arguments]
    os.chdir(root)
    try:
        if setup_py.is_file():
            runpy.run_path(str(setup_py), run_name="__main__")
        else:
            from .project import setup

            setup()
    finally:
        sys.argv, _ = saved_argv, os.chdir(saved_cwd)


def develop(root: Path, *, register: bool = True) -> Project:
    """Build in place; with ``register``, also keep the editable install current."""
    project = Project.load(root)
    with project.build_lock():  # through setuptools' part too (re-entered by setup())
        result = project.build()
        if project.options.cmake_only:
            return project
        project.write_generated_files()
        if not is_current(project, register):
            run_setup_command(project.root, ["develop"] if register else ["build_ext", "--inplace"])
            project.__dict__.pop("cache", None)
            if not register:  # the develop command records its own state
                record(project, register)
    if result is not None and hasattr(result, "summary"):
        result.summary()
    return project
