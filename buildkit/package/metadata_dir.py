"""The wheel's metadata folder: what CMake installs into ``BUILDKIT_METADATA_DIR`` ships in ``.dist-info/``.

buildkit defines ``BUILDKIT_METADATA_DIR`` in every configure (in wheel-root mode
scikit-build-core's ``SKBUILD_METADATA_DIR`` is the same folder).  A project installs
extra ``.dist-info`` files there, e.g. the licenses of what it vendors::

    install(FILES third_party/zlib/LICENSE DESTINATION "${BUILDKIT_METADATA_DIR}/licenses" RENAME zlib.txt)

Files under ``licenses/`` go to ``.dist-info/licenses/`` and each is listed as a
``License-File`` in ``METADATA`` (PEP 639, which needs Metadata-Version 2.4); other
files land in ``.dist-info/`` as they are.  Only files of this build's install count:
one an older build left in the folder is not this build's.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from packaging.version import Version

from buildkit._util.fileutil import FolderResolver, relative_under
from buildkit.errors import BuildkitError
from buildkit.package.wheel_root import wheel_dirs_root

LICENSES = "licenses"
LICENSE_METADATA_VERSION = Version("2.4")
# Written by setuptools, wheel or an installer: a file of that name from CMake would replace
# one of them (or be replaced), so it is refused.
RESERVED_NAMES = frozenset({"METADATA", "WHEEL", "RECORD", "INSTALLER", "REQUESTED", "direct_url.json",
                            "entry_points.txt", "top_level.txt"})


def metadata_dir(build_dir: Path) -> Path:
    return wheel_dirs_root(build_dir) / "metadata"


def installed_metadata_files(installed: Iterable[str | Path], build_dir: Path) -> dict[str, Path]:
    """Path in ``.dist-info`` (posix) -> installed file, for what the install put in the metadata folder."""
    root = metadata_dir(build_dir).resolve()
    resolver = FolderResolver()
    found = {}
    for name in (resolver.file(p) for p in installed):
        if relative_under(name, str(root)) is None:
            continue  # most installed files: decided without resolving each one
        path = Path(name).resolve()
        if path.is_relative_to(root) and path.is_file():
            found[path.relative_to(root).as_posix()] = path
    return dict(sorted(found.items()))


def add_to_dist_info(files: Mapping[str, Path], dist_info: Path) -> list[str]:
    """Copy ``files`` into ``dist_info``; returns the names to list as ``License-File``
    (relative to ``licenses/``).  A file that setuptools already wrote, or will write, is refused."""
    licenses = []
    for relative, source in files.items():
        target = dist_info / PurePosixPath(relative)
        if relative in RESERVED_NAMES or target.exists():
            raise BuildkitError(
                f"CMake installed {relative} into BUILDKIT_METADATA_DIR ({source}), but the wheel's "
                f"{dist_info.name} already has a file of that name, which setuptools writes.",
                "Install it under another name (for a license, e.g. `RENAME <library>-LICENSE.txt`).")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        if PurePosixPath(relative).parts[0] == LICENSES and len(PurePosixPath(relative).parts) > 1:
            licenses.append(PurePosixPath(relative).relative_to(LICENSES).as_posix())
    return licenses


def list_license_files(metadata: Path, names: Sequence[str]) -> None:
    """Add a ``License-File`` header to ``METADATA`` for each name not listed yet, raising
    its Metadata-Version to 2.4 (the first that has the field) where it is older."""
    head, blank, body = metadata.read_text(encoding="utf-8").partition("\n\n")
    lines = head.rstrip("\n").split("\n")
    listed = {line.partition(":")[2].strip() for line in lines if line.startswith("License-File:")}
    added = [name for name in dict.fromkeys(names) if name not in listed]
    if not added:
        return
    lines = [_at_least_license_version(line) for line in lines] + [f"License-File: {name}" for name in added]
    metadata.write_text("\n".join(lines) + "\n" + (f"\n{body}" if blank else ""), encoding="utf-8")


def _at_least_license_version(line: str) -> str:
    key, _, value = line.partition(":")
    if key == "Metadata-Version" and Version(value.strip()) < LICENSE_METADATA_VERSION:
        return f"Metadata-Version: {LICENSE_METADATA_VERSION}"
    return line
