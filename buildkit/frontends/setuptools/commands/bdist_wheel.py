"""``bdist_wheel``: bundled licenses, the metadata folder, cross-build and library-only tags, atomic output.

Seams in setuptools' ``bdist_wheel``:

* :meth:`egg2dist` turns egg-info into dist-info; both ``bdist_wheel.run`` and the
  PEP 517 ``prepare_metadata_for_build_wheel`` path (the ``dist_info`` command)
  call it, so replacing the project's license copy inside the dist-info there
  gives the same licenses either way, without touching the source tree.  What
  CMake installed into ``BUILDKIT_METADATA_DIR`` is added there too.
* :meth:`finalize_options` decides purity: setuptools looks only at the extension
  list, buildkit at the files too (a native binary makes a platform wheel).
* :meth:`get_tag` decides the tag for both the file name and ``WHEEL``:
  ``py3-none-<platform>`` when the wheel holds native code but no extension module.
* :meth:`run` writes the archive with ``WheelFile(dist_dir/...)``; pointing
  ``dist_dir`` at a private folder inside dist/ and renaming the finished wheel
  out of it keeps partial wheels out of dist/.  The folder is named after the
  process, so the folder of a killed build (SIGKILL, no ``finally``) is removed by
  the next run.  A full disk is reported as such, without a traceback.

Reproducibility: ``wheel.wheelfile.WheelFile`` already takes zip timestamps from
``SOURCE_DATE_EPOCH`` and adds files in sorted order (dist-info last); an epoch
given as a config setting is exported for the write so the same holds for it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from typing import Iterator

try:  # setuptools >= 70.1 ships the command; older ones leave it to the wheel package
    from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:  # pragma: no cover - depends on the installed setuptools
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel  # type: ignore[no-redef]

from buildkit._util import console
from buildkit.builder.flags import wheel_platform_tag
from buildkit.config.options import WheelMode
from buildkit.errors import BuildkitError
from buildkit.frontends.setuptools.distribution import project_of
from buildkit.package.contents import native_content
from buildkit.package.dependencies import link_to_dependencies
from buildkit.package.licenses import license_paths, license_text
from buildkit.package.metadata_dir import add_to_dist_info, installed_metadata_files, list_license_files
from buildkit.project import Project

PROJECT_LICENSE = re.compile(r"(LICEN[CS]E|COPYING)", re.IGNORECASE)
STAGING_PREFIX = ".buildkit-wheel-"  # dot-named: `dist/*` globs (twine upload) skip it


def dist_info_license_name(path: str) -> str:
    """Where setuptools puts a license file inside ``.dist-info/licenses`` (and names it in METADATA)."""
    normalized = os.path.normpath(path).replace(os.sep, "/")
    return os.path.basename(normalized) if "../" in normalized else normalized


def _project_license(paths: list[str]) -> str | None:
    named = [p for p in paths if PROJECT_LICENSE.match(os.path.basename(p))]
    return (named or paths or [None])[0]


@contextlib.contextmanager
def _exported_epoch(epoch: int | None) -> Iterator[None]:
    """SOURCE_DATE_EPOCH in the environment while the archive is written (WheelFile reads it there)."""
    if epoch is None or "SOURCE_DATE_EPOCH" in os.environ:
        yield
        return
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        yield
    finally:
        os.environ.pop("SOURCE_DATE_EPOCH", None)


class BdistWheel(_bdist_wheel):
    """setuptools' bdist_wheel with buildkit's licenses, tags and atomic output."""

    # Whether the wheel holds a Python extension module: decided in finalize_options.
    python_abi_specific = True

    def project(self) -> Project:
        return project_of(self.distribution)

    def finalize_options(self) -> None:
        distribution = self.distribution
        library_only = self.project().mode is WheelMode.LIBRARY_ONLY
        declared = distribution.has_ext_modules()
        if library_only and not declared:
            self._mark_platform_specific()
        # CMake built and installed everything before setuptools started: the files the
        # wheel will ship are known now, before purity decides the install scheme.
        content = native_content(self._shipped_files())
        if content.platform_specific and not distribution.has_ext_modules():
            console.info(f"a platform wheel: {', '.join(content.binaries)} "
                         f"{'is a native binary' if len(content.binaries) == 1 else 'are native binaries'}")
            self._mark_platform_specific()
        self.python_abi_specific = not library_only and (declared or bool(content.extension_modules))
        super().finalize_options()

    def _mark_platform_specific(self) -> None:
        """Native binaries shipped as package data make the wheel platform-specific without
        any extension module.  Saying there are some is what makes setuptools mark the wheel
        non-pure (Root-Is-Purelib: false) and install the package at the wheel's root
        (platlib) rather than under <name>.data/purelib."""
        self.distribution.has_ext_modules = lambda: True  # type: ignore[method-assign]

    def _shipped_files(self) -> dict[str, Path]:
        """Path in the wheel (or its data folder) -> file, for every file the wheel ships
        besides the Python modules and the extensions setuptools builds."""
        files = {}
        for package, source, _, names in self.get_finalized_command("build_py").data_files:
            files.update({f"{package.replace('.', '/')}/{name}": Path(source, name) for name in names})
        for entry in self.distribution.data_files or []:
            folder, names = entry if isinstance(entry, tuple) else ("", [entry])
            files.update({f"data/{folder}/{Path(name).name}": Path(name) for name in names})
        for kind in ("scripts", "headers"):
            files.update({f"{kind}/{Path(name).name}": Path(name) for name in getattr(self.distribution, kind) or []})
        return {name: path for name, path in files.items() if path.is_file()}

    # ------------------------------------------------------------------ tags
    def get_tag(self) -> tuple[str, str, str]:
        impl, abi, plat = super().get_tag()
        if not self.root_is_pure and not self.plat_name_supplied:
            plat = self._cross_platform_tag() or plat
        if not self.root_is_pure and not self.python_abi_specific:
            return "py3", "none", plat  # native code but no Python extension: any Python 3 loads it
        return impl, abi, plat

    def _cross_platform_tag(self) -> str | None:
        """The tag cibuildwheel-style variables ask for; None leaves setuptools' own."""
        options = self.project().options
        if not (options.host_platform or options.archflags or options.osx_architectures
                or options.macosx_deployment_target):
            return None
        target = options.macosx_deployment_target
        if target is None and sys.platform == "darwin":
            target = sysconfig.get_config_var("MACOSX_DEPLOYMENT_TARGET") or None
        return wheel_platform_tag(sys.platform, host_platform=options.host_platform, archflags=options.archflags,
                                  osx_architectures=options.osx_architectures, deployment_target=target)

    # -------------------------------------------------------------- licenses
    def egg2dist(self, egginfo_path: str, distinfo_path: str) -> None:
        super().egg2dist(egginfo_path, distinfo_path)
        self._bundle_licenses(Path(distinfo_path))
        self._add_metadata_dir(Path(distinfo_path))
        self._link_library_dependencies()

    def _link_library_dependencies(self) -> None:
        """An rpath from each binary to the library dependencies it needs, on the wheel's copy
        (the develop install keeps finding them through the generated loader)."""
        found = self.project().runtime_dependencies()
        if found and sys.platform.startswith("linux"):
            for name in link_to_dependencies(Path(self.bdist_dir), found):
                console.detail(f"rpath into {', '.join(d.distribution for d in found)}: {name}")

    def _add_metadata_dir(self, dist_info: Path) -> None:
        project = self.project()
        files = installed_metadata_files(project.install_manifest, project.build_dir)
        list_license_files(dist_info / "METADATA", add_to_dist_info(files, dist_info))

    def _bundle_licenses(self, dist_info: Path) -> None:
        settings = self.project().settings
        third_party = license_paths(settings.root, settings.licenses)
        if not third_party:
            return
        own = _project_license([str(p) for p in self.license_paths])
        if own is None:
            console.warn("the project has no license file of its own; the wheel's LICENSE holds only the "
                         "third-party licenses from [tool.buildkit] licenses.")
            name = "LICENSE"
            list_license_files(dist_info / "METADATA", [name])
        else:
            name = dist_info_license_name(own)
        target = dist_info / "licenses" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        text = license_text(None if own is None else Path(own).absolute(), third_party, settings.root)
        target.write_text(text, encoding="utf-8", newline="\n")

    # ---------------------------------------------------------------- output
    def _forget_previous_build_lib(self) -> None:
        """setuptools copies into build/lib.* and never deletes there: a file a previous
        wheel shipped (a component since switched off) would ship again."""
        build = self.get_finalized_command("build")
        build_lib = Path(build.build_lib).resolve()
        if build_lib.is_dir() and build_lib.is_relative_to(Path.cwd().resolve()):
            shutil.rmtree(build_lib)

    def run(self) -> None:
        final_dir = Path(self.dist_dir)
        final_dir.mkdir(parents=True, exist_ok=True)
        _remove_abandoned_staging(final_dir)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=final_dir))
        dist_files = getattr(self.distribution, "dist_files", [])
        first_new = len(dist_files)
        self.dist_dir = str(staging)
        self._forget_previous_build_lib()
        try:
            with _exported_epoch(self.project().options.source_date_epoch):
                super().run()
            for index in range(first_new, len(dist_files)):
                command, python, path = dist_files[index]
                published = final_dir / Path(path).name
                os.replace(path, published)  # same file system: the wheel appears complete or not at all
                dist_files[index] = (command, python, str(published))
        except OSError as error:
            _close_unfinished_archives(error)
            if error.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                raise
            raise BuildkitError(f"Building the wheel ran out of space: {error}.",
                                f"Free disk space (or raise the file size limit, `ulimit -f`) and run again; "
                                f"no partial wheel was left in {final_dir}.") from None
        finally:
            self.dist_dir = str(final_dir)
            shutil.rmtree(staging, ignore_errors=True)


def _remove_abandoned_staging(dist_dir: Path) -> None:
    """Staging folders of builds that died without cleaning up (their process is gone)."""
    for folder in dist_dir.glob(f"{STAGING_PREFIX}*-*"):
        pid = folder.name[len(STAGING_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _process_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _close_unfinished_archives(error: BaseException) -> None:
    """The archive a failed write leaves open would try to finish itself when garbage
    collected, fail again and print a traceback: close its file unfinished (the staging
    folder holding it is removed anyway)."""
    tb = error.__traceback__
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            if isinstance(value, zipfile.ZipFile) and value.fp is not None:
                fp, value.fp = value.fp, None
                with contextlib.suppress(OSError):
                    fp.close()
        tb = tb.tb_next
