"""Register an in-place build as a proper editable install, without pip.

``python setup.py develop`` and ``buildkit develop`` build in place; this module
makes the interpreter see the project and makes ``pip`` treat it as installed:
a ``.dist-info`` with METADATA, entry points, ``direct_url.json`` (editable) and a
RECORD (so ``pip uninstall`` removes it), a ``.pth`` file, and console scripts.
Registration is skipped when the recorded fingerprint (metadata, scripts, project
path) is unchanged, so a no-op develop does no work here.

With ``editable-rebuild``, an editable install (this registration, or the wheel of ``pip
install -e .``) also carries the hook that rebuilds before the project is imported
(:func:`rebuild_hook_files`; :mod:`buildkit.editable_rebuild` says what it runs).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from buildkit._util import console
from buildkit._util.fileutil import write_atomic
from buildkit._util.resources import templates_dir
from buildkit._util.switches import EDITABLE_REBUILD_VARIABLE, FALSE_WORDS
from buildkit.errors import BuildkitError

TYPE_CHECKING = False  # no typing import at run time for annotations only
if TYPE_CHECKING:
    from setuptools.dist import Distribution

MARKER = "buildkit_editable.json"
INSTALLER = "buildkit"
REBUILD_HOOK = "_buildkit_rebuild_{normalized}"  # the hook's module; its .pth file has the same name
PRELOAD_HOOK = "_buildkit_preload_{normalized}"  # the same for the preload of NVIDIA's libraries


@dataclass(frozen=True)
class RebuildHook:
    """What an editable install's rebuild on import needs besides the project (``editable-rebuild``)."""

    build_dir: Path
    verbose: bool  # editable-verbose


@dataclass(frozen=True)
class EditableSpec:
    """What an editable install consists of; its fingerprint decides re-registration."""

    name: str
    version: str
    metadata: str  # the METADATA file's text
    console_scripts: tuple[str, ...]  # "name = module:attr"
    root: Path
    top_level: tuple[str, ...]
    # Top-level name -> ("package", its folder) or ("module", the folder holding it).
    locations: tuple[tuple[str, str, str], ...] = ()
    rebuild: RebuildHook | None = None

    @property
    def fingerprint(self) -> str:
        hook = [str(self.rebuild.build_dir), self.rebuild.verbose] if self.rebuild else None
        payload = json.dumps([self.name, self.version, self.metadata, self.console_scripts, str(self.root),
                              self.top_level, self.locations, sys.prefix, hook])
        return hashlib.sha256(payload.encode()).hexdigest()

    @property
    def normalized(self) -> str:
        return re.sub(r"[-_.]+", "_", self.name).lower()


def spec_from_distribution(distribution: Distribution, root: Path, rebuild: RebuildHook | None = None
                           ) -> EditableSpec:
    buffer = io.StringIO()
    distribution.metadata.write_pkg_file(buffer)
    entry_points: dict[str, list[str]] | None = getattr(distribution, "entry_points", None)  # not in the stubs
    scripts = tuple((entry_points or {}).get("console_scripts", []))
    locations = top_level_locations(root.resolve(), distribution.package_dir or {}, distribution.packages or [],
                                    distribution.py_modules or [], [e.name for e in distribution.ext_modules or []])
    return EditableSpec(distribution.get_name(), distribution.get_version(), buffer.getvalue(),
                        scripts, root.resolve(), tuple(sorted({name for name, _, _ in locations})), locations,
                        rebuild)


def top_level_locations(root: Path, package_dir: Mapping[str, str], packages: list[str], py_modules: list[str],
                        ext_modules: list[str]) -> tuple[tuple[str, str, str], ...]:
    """Where each top-level package and module of the distribution lives.

    Only these names are importable through the registration: the project folder
    itself is not put on ``sys.path``, so its ``setup.py`` or ``tests`` stay out of reach.
    """
    package_root = root / package_dir.get("", ".")
    found = {}
    for top in dict.fromkeys(p.split(".")[0] for p in packages):
        found[top] = ("package", str((root / package_dir[top]) if top in package_dir else package_root / top))
    for module in [*py_modules, *(e for e in ext_modules if "." not in e)]:
        found.setdefault(module, ("module", str(package_root)))
    return tuple((name, kind, where) for name, (kind, where) in sorted(found.items()))


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def scripts_dir() -> Path:
    return Path(sysconfig.get_paths()["scripts"])


def find_installed(normalized_name: str, site: Path) -> Path | None:
    for info in site.glob("*.dist-info"):
        dist_name = info.name[: -len(".dist-info")].rsplit("-", 1)[0]
        if re.sub(r"[-_.]+", "_", dist_name).lower() == normalized_name:
            return info
    return None


def is_current(spec: EditableSpec, site: Path | None = None) -> bool:
    info = find_installed(spec.normalized, site or site_packages())
    if info is None or not (info / MARKER).is_file():
        return False
    try:
        recorded: object = json.loads((info / MARKER).read_text())["fingerprint"]
        return recorded == spec.fingerprint
    except (ValueError, KeyError):
        return False


def register(spec: EditableSpec, site: Path | None = None, bin_dir: Path | None = None) -> bool:
    """Install the editable registration; returns False when it was already current."""
    site = site or site_packages()
    bin_dir = bin_dir or scripts_dir()
    if is_current(spec, site):
        return False
    existing = find_installed(spec.normalized, site)
    if existing is not None:
        _remove_existing(existing, spec.name, site)
    info = site / f"{spec.normalized}-{spec.version.replace('-', '_')}.dist-info"
    info.mkdir(parents=True)
    written: list[Path] = []
    files = {
        "METADATA": spec.metadata,
        "INSTALLER": INSTALLER + "\n",
        "direct_url.json": json.dumps({"url": spec.root.as_uri(), "dir_info": {"editable": True}}) + "\n",
        "entry_points.txt": _entry_points(spec.console_scripts),
        "top_level.txt": "".join(f"{t}\n" for t in spec.top_level),
        MARKER: json.dumps({"fingerprint": spec.fingerprint, "root": str(spec.root)}) + "\n",
    }
    for name, text in files.items():
        written.append(_write(info / name, text))
    finder = f"__editable___{spec.normalized}_finder"
    written.append(_write(site / f"{finder}.py", finder_module(spec)))
    written.append(_write(site / f"__editable__.{spec.normalized}.pth", f"import {finder}; {finder}.install()\n"))
    written += [_write(site / name, text) for name, text in rebuild_hook_files(spec).items()]
    for entry in spec.console_scripts:
        written.append(_write_script(bin_dir, entry))
    _write_record(info, site, written)
    rebuilds = " (it rebuilds what changed when imported: editable-rebuild)" if spec.rebuild else ""
    console.info(f"registered editable install of {spec.name} {spec.version} -> {spec.root}{rebuilds}")
    return True


def finder_module(spec: EditableSpec) -> str:
    """The import hook that maps the registered top-level names to the project's folders."""
    locations = {name: (kind, where) for name, kind, where in spec.locations}
    return ((templates_dir() / "editable_finder.py.in").read_text(encoding="utf-8")
            .replace("@NAME@", spec.name).replace("@ROOT@", str(spec.root))
            .replace("@LOCATIONS@", repr(locations)))


def rebuild_hook_files(spec: EditableSpec) -> dict[str, str]:
    """The files (name in site-packages -> text) of the hook that rebuilds before the project
    is imported: none without ``editable-rebuild``."""
    if spec.rebuild is None:
        return {}
    module = REBUILD_HOOK.format(normalized=spec.normalized)
    text = (templates_dir() / "editable_rebuild.py.in").read_text(encoding="utf-8")
    for placeholder, value in (("@NAME@", spec.name), ("@ROOT@", str(spec.root)),
                               ("@BUILD_DIR@", str(spec.rebuild.build_dir)), ("@TOP_LEVEL@", sorted(spec.top_level)),
                               ("@VERBOSE@", spec.rebuild.verbose), ("@SWITCH@", EDITABLE_REBUILD_VARIABLE),
                               ("@OFF_WORDS@", FALSE_WORDS)):
        text = text.replace(placeholder, repr(value))
    return {f"{module}.py": text, f"{module}.pth": f"import {module}; {module}.install()\n"}


def preload_hook_files(spec: EditableSpec, loader: str) -> dict[str, str]:
    """The files (name in site-packages -> text) of an editable wheel's hook that runs the
    generated loader's code (``loader``: :func:`buildkit.package.split.native_loader_text`)
    before the project is first imported: none without a ``loader``.  The ``.pth`` file
    imports only the lean finder; the loader (ctypes, importlib.metadata: ~50 ms) is imported
    at the project's first import, never at every Python's start."""
    if not loader:
        return {}
    module = PRELOAD_HOOK.format(normalized=spec.normalized)
    text = (templates_dir() / "editable_preload.py.in").read_text(encoding="utf-8")
    for placeholder, value in (("@NAME@", spec.name), ("@TOP_LEVEL@", sorted(spec.top_level)),
                               ("@LOADER@", f"{module}_loader")):
        text = text.replace(placeholder, repr(value))
    return {f"{module}.py": text, f"{module}_loader.py": loader,
            f"{module}.pth": f"import {module}; {module}.install()\n"}


def _remove_existing(info: Path, name: str, site: Path) -> None:
    installer = (info / "INSTALLER").read_text().strip() if (info / "INSTALLER").is_file() else ""
    if installer == INSTALLER:
        remove_recorded(info, site)
        return
    # Someone else's install (pip, conda): let pip remove it the way it knows, when this
    # interpreter has pip; else (a pip-less venv) remove what its RECORD lists, as pip would.
    console.info(f"replacing the existing install of {name} ({installer or 'unknown installer'})")
    why = "this interpreter has no pip"
    if importlib.util.find_spec("pip") is not None:
        result = subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q", name], check=False,
                                capture_output=True, text=True)
        why = f"pip uninstall failed: {(result.stderr or result.stdout).strip()[-300:]}"
    if not info.exists():
        return
    if not (info / "RECORD").is_file():
        raise BuildkitError(f"Cannot replace the existing install of {name} ({installer or 'unknown installer'}) "
                            f"in {site}: {why}, and {info.name} has no RECORD listing its files.",
                            f"Uninstall {name} with the tool that installed it, then run the command again.")
    console.info(f"{why}: removing the files {info.name}/RECORD lists")
    remove_recorded(info, site)


def remove_recorded(info: Path, site: Path) -> None:
    record = info / "RECORD"
    if record.is_file():
        for line in record.read_text().splitlines():
            rel = line.rsplit(",", 2)[0]
            path = (site / rel).resolve()
            if path.is_file() and not path.is_relative_to(info.resolve()):
                path.unlink()
    shutil.rmtree(info, ignore_errors=True)


def _entry_points(scripts: tuple[str, ...]) -> str:
    return "[console_scripts]\n" + "".join(f"{s}\n" for s in scripts) if scripts else ""


def _write(path: Path, text: str) -> Path:
    write_atomic(path, text.encode("utf-8"))
    return path


def _write_script(bin_dir: Path, entry: str) -> Path:
    name, target = (part.strip() for part in entry.split("=", 1))
    module, _, attr = target.partition(":")
    head, *rest = (attr or "main").split(".")
    call = ".".join([head, *rest])
    text = (f"#!{sys.executable}\n"
            f"import sys\nfrom {module} import {head}\n"
            f"if __name__ == '__main__':\n    sys.exit({call}())\n")
    path = _write(bin_dir / name, text)
    path.chmod(0o755)
    return path


def _write_record(info: Path, site: Path, written: list[Path]) -> None:
    lines = []
    for path in written:
        digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
        lines.append(f"{os.path.relpath(path, site)},sha256={digest},{path.stat().st_size}")
    lines.append(f"{os.path.relpath(info / 'RECORD', site)},,")
    (info / "RECORD").write_text("\n".join(lines) + "\n", encoding="utf-8")
