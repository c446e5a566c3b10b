"""The staging tree a wheel is built from, so that a wheel build leaves the source tree as it was.

``pip install .``, ``pip wheel .``, ``python -m build`` and ``bdist_wheel`` install
the CMake outputs into ``<build>/wheel-staging/`` instead of the package folder,
and package from there: the project's Python packages and top-level modules are
copied in first (only files whose content changed are rewritten, so their times
stay put), then ``cmake --install --prefix`` puts the built files on top, then the
generated ``version.py``.  Only develop and editable builds install into the source
tree.

What a develop build left in the source tree is not the wheel's: the files of the
package tree's install manifest, extension modules built in place and files buildkit
generated are not copied.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Iterable
from pathlib import Path, PurePosixPath

from buildkit._util import console
from buildkit._util.git import run_git
from buildkit.builder.build_state import WHEEL_STAGING
from buildkit.config.python_layout import PythonLayout
from buildkit.package.contents import is_extension_module, module_suffixes
from buildkit.package.layout import files_below
from buildkit.package.links import LinkGuard
from buildkit.package.version import is_generated_version_file

STAGING_FOLDER = WHEEL_STAGING
_NEVER = ("__pycache__",)
_NEVER_SUFFIXES = (".pyc", ".pyo")


def staging_root(build_dir: Path) -> Path:
    return build_dir / STAGING_FOLDER


def _in_place_outputs(name: str) -> bool:
    """Extension modules ``build_ext --inplace`` (or an earlier develop) left beside the
    sources.  This interpreter's are superseded by the staging tree's install; another
    interpreter's or ABI's would ship under a tag that cannot load them, so each is named."""
    if name.endswith(module_suffixes()):
        return True
    if is_extension_module(name):
        console.info(f"left out of the wheel: {name}, an extension module for another Python than this "
                     f"build's ({module_suffixes()[0]}), left in the package tree by an in-place build")
        return True
    return False


def source_files(project_root: Path, layout: PythonLayout, develop_outputs: Collection[str | Path], *,
                 links: LinkGuard) -> dict[str, Path]:
    """Staged path (relative, posix) -> source file, for every file of the layout's
    packages and top-level modules that belongs in a wheel build's staging tree.  A link
    among them is staged as its target's content, so each must pass ``links``."""
    # Strings, not Paths: the package folder of a develop build holds what CMake installed
    # there (thousands of headers), each of which is looked up here.
    skipped = {os.path.abspath(p) for p in develop_outputs}
    found: dict[str, Path] = {}
    for name in layout.top_level_packages:
        # Listed from its absolute, normalized path: the names below it need no abspath of their own.
        folder = os.path.abspath(project_root / layout.folder_of(name))
        if not os.path.isdir(folder):
            continue  # not there yet: CMake creates it
        for relative in files_below(folder, links=links, skipped_folders=_NEVER):
            file = relative.rpartition("/")[2]
            name_on_disk = os.path.join(folder, relative if os.sep == "/" else relative.replace("/", os.sep))
            if file.endswith(_NEVER_SUFFIXES) or _in_place_outputs(file) or name_on_disk in skipped:
                continue
            path = Path(name_on_disk)
            if file.endswith(".py") and is_generated_version_file(path):
                continue
            found[f"{(layout.package_root / name).as_posix()}/{relative}"] = path
    for module in layout.py_modules:
        path = project_root / layout.package_root / f"{module}.py"
        links.check_path(path)
        if path.is_file():
            found[(layout.package_root / f"{module}.py").as_posix()] = path
    return found


def sync_sources(files: dict[str, Path], root: Path, installed: Iterable[str | Path]) -> None:
    """Mirror ``files`` into ``root``: copy what differs, remove staged sources that are
    gone (what CMake installed there stays: its install step prunes its own)."""
    for relative, source in files.items():
        target = root / PurePosixPath(relative)
        if target.is_file() and not target.is_symlink() and _same_content(source, target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.exists():
            target.unlink()
        shutil.copy2(source, target)
    if not root.is_dir():
        return
    keep = {os.path.abspath(root / PurePosixPath(r)) for r in files} | {os.path.abspath(p) for p in installed}
    for directory, _, names in os.walk(os.path.abspath(root), topdown=False):
        for name in names:
            path = os.path.join(directory, name)  # below an absolute, normalized root: already so
            if path not in keep:
                os.unlink(path)
        if Path(directory) != root and not any(Path(directory).iterdir()):
            Path(directory).rmdir()


def _same_content(a: Path, b: Path) -> bool:
    sa, sb = a.stat(), b.stat()
    if sa.st_size != sb.st_size:
        return False
    if sa.st_mtime_ns == sb.st_mtime_ns:
        return True  # copy2 keeps the time: the file was copied from this very version
    return a.read_bytes() == b.read_bytes()


def data_sources(files: dict[str, Path], layout: PythonLayout, root: Path, packages: Collection[str],
                 project_root: Path) -> tuple[list[Path], list[str]]:
    """The staged source files that are data rather than modules setuptools ships by
    package (the ``.py`` files of the wheel's packages), as paths in the staging tree
    ``root``; and those left out because the project's ``.gitignore`` names them
    (relative to the project), as scikit-build-core leaves them out."""
    package_folders = {PurePosixPath(name.replace(".", "/")) for name in packages}
    ignored = set(run_git(project_root, "ls-files", "--others", "--ignored", "--exclude-standard") or ())
    shipped, left_out = [], []
    for relative, source in files.items():
        in_wheel = PurePosixPath(relative).relative_to(layout.package_root)
        if in_wheel.suffix == ".py" and in_wheel.parent in package_folders:
            continue
        if source.is_relative_to(project_root) and source.relative_to(project_root).as_posix() in ignored:
            left_out.append(source.relative_to(project_root).as_posix())
            continue
        shipped.append(root / PurePosixPath(relative))
    return shipped, sorted(left_out)
