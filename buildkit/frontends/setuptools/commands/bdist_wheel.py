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
* :meth:`run` takes setuptools' steps (build, install into ``bdist_dir``, dist-info,
  WHEEL) with two changes.  Files are not copied twice on their way into the
  archive: package data, which is what CMake installed (headers, libraries, large
  data files), is read where it lies (the staging tree of a wheel build) instead of
  being copied into build/lib and from there into ``bdist_dir``, and the modules and
  extension modules in build/lib are read there instead of being copied into
  ``bdist_dir``; each member keeps the mode and date its copy would have had.  And
  the archive is written by :mod:`buildkit.package.wheel_zip`, which deflates on a
  thread per core (``MAX_JOBS`` caps them) and reports its rate.  Pointing
  ``dist_dir`` at a private folder inside dist/ and renaming the finished wheel out
  of it keeps partial wheels out of dist/.  The folder is named after the process,
  so the folder of a killed build (SIGKILL, no ``finally``) is removed by the next
  run.  A full disk is reported as such, without a traceback.

Reproducibility: the writer dates members by ``SOURCE_DATE_EPOCH`` (the environment
variable or the config setting) as WheelFile did, adds them in sorted order with the
dist-info last, and its bytes do not depend on the number of threads.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

try:  # setuptools >= 70.1 ships the command; older ones leave it to the wheel package
    from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:  # pragma: no cover - depends on the installed setuptools
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel  # type: ignore[no-redef,import-untyped]  # the fallback for an old setuptools; wheel has no type hints

from buildkit._util import console
from buildkit._util.fileutil import STAGING_PREFIX, process_folder, relative_below
from buildkit.builder.toolchain.flags import wheel_platform_tag
from buildkit.builder.toolchain.jobs import cpu_count
from buildkit.config.modes import WheelMode
from buildkit.errors import BuildkitError
from buildkit.frontends.setuptools.distribution import project_of
from buildkit.package.contents import native_content
from buildkit.package.dependencies import link_to_dependencies
from buildkit.package.licenses import bundle_licenses, license_paths
from buildkit.package.metadata_dir import add_to_dist_info, installed_metadata_files, list_license_files
from buildkit.package.split import NATIVE_LOADER
from buildkit.package.wheel_zip import DEFLATED, STORED, Member, wheel_members, write_wheel
from buildkit.project import Project

if TYPE_CHECKING:
    from distutils.command.build_scripts import build_scripts

MACOS_BINARIES = (".so", ".dylib")  # what setuptools reads for a macOS wheel's minimum version


class BdistWheel(_bdist_wheel):
    """setuptools' bdist_wheel with buildkit's licenses, tags and atomic output."""

    # Whether the wheel holds a Python extension module: decided in finalize_options.
    python_abi_specific = True
    # The files the archive reads where they lie (package data from its source, build/lib's
    # files from there: see _make_wheel), and the folder the archive's names are relative
    # to: set by run.
    by_reference: tuple[Member, ...] = ()
    archive_root: Path | None = None
    # Set by finalize_options, where the stubs say `str | None` (None only before it).
    bdist_dir: str
    dist_dir: str
    # Set by set_undefined_options("install_egg_info", ...) in _make_wheel, before it is read.
    egginfo_dir: str
    # setuptools' own method (no stub): an absolute path made relative to its drive.
    _ensure_relative: Callable[[str], str]

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
        api = self.project().python_api
        if api.ignored_because and self.python_abi_specific:
            console.info(f"py-api = {api.requested} gives this interpreter's own wheel tag: {api.ignored_because}")
        super().finalize_options()

    def _mark_platform_specific(self) -> None:
        """Native binaries shipped as package data make the wheel platform-specific without
        any extension module.  Saying there are some is what makes setuptools mark the wheel
        non-pure (Root-Is-Purelib: false) and install the package at the wheel's root
        (platlib) rather than under <name>.data/purelib."""
        self.distribution.has_ext_modules = lambda: True  # type: ignore[method-assign]  # setuptools asks this method; the instance's answer wins

    def _shipped_files(self) -> dict[str, str]:
        """Path in the wheel (or its data folder) -> file, for every file the wheel ships
        besides the Python modules and the extensions setuptools builds.  Strings, not
        Paths: package data is thousands of installed headers."""
        files = {}
        for package, source, _, names in self.get_finalized_command("build_py").data_files:
            folder = os.path.join(source, "")
            files.update({f"{package.replace('.', '/')}/{name}": folder + name for name in names})
        for entry in self.distribution.data_files or []:
            folder, names = entry if isinstance(entry, tuple) else ("", [entry])
            files.update({f"data/{folder}/{os.path.basename(name)}": os.fspath(name) for name in names})
        for kind in ("scripts", "headers"):
            files.update({f"{kind}/{os.path.basename(name)}": os.fspath(name)
                          for name in getattr(self.distribution, kind) or []})
        return {name: path for name, path in files.items() if os.path.isfile(path)}

    # ------------------------------------------------------------------ tags
    def get_tag(self) -> tuple[str, str, str]:
        impl, abi, plat = super().get_tag()
        if not self.root_is_pure and not self.plat_name_supplied:
            plat = self._cross_platform_tag() or plat
        if not self.root_is_pure and not self.python_abi_specific:
            return "py3", "none", plat  # native code but no Python extension: any Python 3 loads it
        api = self.project().python_api
        if api.python_tag and api.abi_tag and not self.root_is_pure:
            return api.python_tag, api.abi_tag, plat  # py-api: the stable ABI, or no Python API at all
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
        project = self.project()
        found = project.runtime_dependencies()
        if found and sys.platform.startswith("linux"):
            self._copy_referenced_in()
            # The generated loader, where this wheel ships it (never a library-only wheel's).
            package = Path(self.bdist_dir, *project.settings.package.split("."))
            loader = project.writes_native_loader() and (package / NATIVE_LOADER).is_file()
            for name in link_to_dependencies(Path(self.bdist_dir), found, loader=loader):
                console.detail(f"rpath into {', '.join(d.distribution for d in found)}: {name}")

    def _add_metadata_dir(self, dist_info: Path) -> None:
        project = self.project()
        files = installed_metadata_files(project.installed_names, project.build_dir)
        list_license_files(dist_info / "METADATA", add_to_dist_info(files, dist_info))

    def _bundle_licenses(self, dist_info: Path) -> None:
        settings = self.project().settings
        third_party = license_paths(settings.root, settings.licenses)
        own_paths = [str(p) for p in self.license_paths]  # PEP 639 license-files, as setuptools found them
        links = self.project().link_guard(settings.root)
        checked: list[str | Path] = [*own_paths, *third_party]
        for path in checked:  # setuptools copies its own as they are: check them too
            links.check_path(path)
        if third_party:
            written = bundle_licenses(dist_info, own_paths, third_party, settings.root)
            if written is not None:  # no license of the project's own: setuptools named none in METADATA
                list_license_files(dist_info / "METADATA", [written])

    # ---------------------------------------------------------------- output
    def _forget_previous_build_lib(self) -> None:
        """setuptools copies into build/lib.* and never deletes there: a file a previous
        wheel shipped (a component since switched off) would ship again.  With
        ``--skip-build`` build/lib is what an earlier ``build`` made for this wheel: it is
        packed as it is, and a missing one is refused rather than packed as an empty wheel."""
        build = self.get_finalized_command("build")
        build_lib = Path(build.build_lib).resolve()
        if self.skip_build:
            if not build_lib.is_dir():
                raise BuildkitError(f"bdist_wheel --skip-build found no {build.build_lib}: the wheel would hold "
                                    "no modules and no package data.",
                                    "Run `python setup.py build` first (with the same options), or leave out "
                                    "--skip-build.")
            return
        if build_lib.is_dir() and build_lib.is_relative_to(Path.cwd().resolve()):
            shutil.rmtree(build_lib)

    def run(self) -> None:
        final_dir = Path(self.dist_dir)
        final_dir.mkdir(parents=True, exist_ok=True)
        staging = process_folder(final_dir, STAGING_PREFIX)
        dist_files = getattr(self.distribution, "dist_files", [])
        first_new = len(dist_files)
        self.dist_dir = str(staging)
        self._forget_previous_build_lib()
        try:
            self._make_wheel()
            for index in range(first_new, len(dist_files)):
                command, python, path = dist_files[index]
                published = final_dir / Path(path).name
                os.replace(path, published)  # same file system: the wheel appears complete or not at all
                dist_files[index] = (command, python, str(published))
        except OSError as error:
            if error.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                raise
            raise BuildkitError(f"Building the wheel ran out of space: {error}.",
                                f"Free disk space (or raise the file size limit, `ulimit -f`) and run again; "
                                f"no partial wheel was left in {final_dir}.") from None
        finally:
            self.dist_dir = str(final_dir)
            shutil.rmtree(staging, ignore_errors=True)

    # ----------------------------------------------------------------- the wheel
    def _make_wheel(self) -> None:
        """setuptools' bdist_wheel steps, with the installed files read where they lie and
        buildkit's archive writer."""
        # Known by construction: the distribution's build_scripts is distutils' (or buildkit's subclass).
        build_scripts = cast("build_scripts", self.reinitialize_command("build_scripts"))
        build_scripts.executable, build_scripts.force = "python", True
        self.reinitialize_command("build_ext").inplace = False
        # With --skip-build, an earlier `build` copied the package data into build/lib.
        left_in_place = [] if self.skip_build else self._build_leaving_package_data()
        install, lib_files = self._install_into_bdist_dir()
        archive_root = Path(self.bdist_dir)
        if self.relative:
            archive_root = archive_root / self._ensure_relative(install.install_base)
        self.archive_root = archive_root
        # Where install_lib would have copied each file of build/lib, package data included:
        # worked out once per package folder, not once for each of thousands of files.
        install_lib = self.get_finalized_command("install_lib")
        root, cwd = str(archive_root), os.getcwd()
        in_archive: dict[str, str] = {}

        def archive_folder(built: str) -> str:
            if built not in in_archive:
                target = os.path.join(install_lib.install_dir, relative_below(built, install_lib.build_dir))
                relative = relative_below(target, root).replace(os.sep, "/")
                in_archive[built] = "" if relative == "." else f"{relative}/"
            return in_archive[built]

        package_data = [(archive_folder(built) + name.replace(os.sep, "/"), os.path.join(source, name),
                         stat.S_IWRITE)  # setuptools makes each copy of package data writable
                        for built, name, source in left_in_place]
        modules = [(relative_below(target, root).replace(os.sep, "/"), source, 0) for target, source in lib_files]
        # Later ones win: build_py keeps a module over package data of the same path.
        self.by_reference = tuple(  # joined as Path.absolute() would, without a Path per file
            Member(name, os.path.join(cwd, source), add_mode) for name, source, add_mode in [*package_data, *modules])

        if sys.platform == "darwin":  # the macOS tag comes from the binaries found in bdist_dir
            self._copy_referenced_in(MACOS_BINARIES)
        self.set_undefined_options("install_egg_info", ("target", "egginfo_dir"))
        # wheel_dist_name is "<name>-<version>[-<build>]", both parts with "-" made "_".
        dist_info_dir = Path(self.bdist_dir, "-".join(self.wheel_dist_name.split("-")[:2]) + ".dist-info")
        prepared = getattr(self, "dist_info_dir", None)  # the PEP 517 metadata hook's, handed over
        if prepared:
            shutil.copytree(prepared, dist_info_dir)
            shutil.rmtree(self.egginfo_dir)  # made by install all the same; not the wheel's
        else:
            self.egg2dist(self.egginfo_dir, str(dist_info_dir))
        self.write_wheelfile(str(dist_info_dir))

        wheel = Path(self.dist_dir, f"{self.wheel_dist_name}-{'-'.join(self.get_tag())}.whl")
        dist_info = os.path.relpath(dist_info_dir, archive_root).replace(os.sep, "/")
        options, cores = self.project().options, cpu_count()
        members = wheel_members(archive_root, dist_info, self.by_reference)
        self._refuse_modules_outside_the_api([member.name for member in members], wheel.name)
        stats = write_wheel(wheel, members, dist_info,
                            epoch=options.source_date_epoch, threads=min(options.jobs or cores, cores),
                            method=self._compression_method())
        console.info(f"packed {wheel.name}: {stats.describe()}")
        getattr(self.distribution, "dist_files", []).append(
            ("bdist_wheel", f"{sys.version_info[0]}.{sys.version_info[1]}", str(wheel)))
        if not self.keep_temp:
            shutil.rmtree(self.bdist_dir)

    def _refuse_modules_outside_the_api(self, names: list[str], wheel: str) -> None:
        api = self.project().python_api
        if outside := api.modules_outside(names):
            raise BuildkitError(
                f"{wheel} is tagged for the stable ABI (py-api = {api.requested}), but "
                f"{', '.join(outside)} {'is' if len(outside) == 1 else 'are'} built for one interpreter only: "
                "such a wheel would install a module every other Python it claims fails to import.",
                "Build each module for the limited API: `Python_add_library(<name> MODULE USE_SABI "
                "${SKBUILD_SABI_VERSION} WITH_SOABI ...)` after `find_package(Python COMPONENTS Interpreter "
                "Development.Module ${SKBUILD_SABI_COMPONENT})`, or `nanobind_add_module(<name> STABLE_ABI ...)` "
                "(BUILDKIT_SABI_VERSION and BUILDKIT_SABI_COMPONENT hold the same values); or remove py-api.")

    def _build_leaving_package_data(self) -> list[tuple[str, str, str]]:
        """Run ``build`` without build_py's copy of the package data into build/lib;
        returns (build/lib folder, file name, source folder) for each file left out.

        setuptools has no option for this, so build_py's ``build_package_data`` is replaced
        on this one command object for the duration of the build."""
        build_py = self.get_finalized_command("build_py")
        left: list[tuple[str, str, str]] = []

        def record_package_data() -> None:
            # build_py.data_files: (package, source folder, build/lib folder, file names)
            left.extend((built, name, source) for _, source, built, names in build_py.data_files for name in names)

        build_py.build_package_data = record_package_data  # type: ignore[method-assign]  # on this one command object, undone below
        try:
            self.run_command("build")
        finally:
            del build_py.build_package_data
        return left

    def _install_into_bdist_dir(self) -> tuple[Any, list[tuple[str, str]]]:
        """``install`` into bdist_dir with the wheel's layout (the root package folder,
        purelib or platlib, at the top, the others in ``<name>.data/``), except that
        install_lib's copy of build/lib is left out: returns the command and install_lib's
        (would-be copy, file in build/lib) pairs.  Like build_package_data above,
        install_lib's ``install`` is replaced on the one command object while it runs."""
        install = self.reinitialize_command("install", reinit_subcommands=True)
        install.root = self.bdist_dir
        install.compile = False
        install.skip_build = self.skip_build
        install.warn_dir = False
        # Entry points are metadata in a wheel: no console-script wrappers among the files.
        self.reinitialize_command("install_scripts").no_ep = True
        for key in ("headers", "scripts", "data", "purelib", "platlib"):
            setattr(install, f"install_{key}", os.path.join(self.data_dir, key))
        root_folder = ""
        if os.name == "nt":  # distutils' change_roots fails on an empty path there
            root_folder = os.path.normpath(os.path.join(self.data_dir, ".."))
            self.install_libbase = self.install_lib = root_folder
        setattr(install, "install_purelib" if self.root_is_pure else "install_platlib", root_folder)

        install_lib = self.distribution.get_command_obj("install_lib")
        lib_files: list[tuple[str, str]] = []

        def record_lib_files() -> list[str] | None:
            if install_lib.optimize or not os.path.isdir(install_lib.build_dir):
                return type(install_lib).install(install_lib)  # .pyc files to write, or nothing to do
            # namespace packages' __init__.py
            excluded: list[str] = install_lib.get_exclusions()  # type: ignore[no-untyped-call]  # unannotated in the stubs
            for folder, _, names in os.walk(install_lib.build_dir, followlinks=True):  # as copy_tree descends
                for name in sorted(names):
                    source = os.path.join(folder, name)
                    target = os.path.join(install_lib.install_dir, os.path.relpath(source, install_lib.build_dir))
                    if target not in excluded:
                        lib_files.append((target, source))
            return [target for target, _ in lib_files]

        install_lib.install = record_lib_files  # type: ignore[method-assign]  # on this one command object, undone below
        # buildkit's EggInfo reads for_wheel_only; another project's egg_info just carries it.
        egg_info: Any = self.distribution.get_command_obj("egg_info")
        egg_info.for_wheel_only = not self.distribution.have_run.get("egg_info")
        try:
            self.run_command("install")
        finally:
            del install_lib.install
            if egg_info.for_wheel_only:  # a later sdist in this run lists the sources in full
                egg_info.for_wheel_only = False
                self.distribution.have_run["egg_info"] = False
        return install, lib_files

    def _copy_referenced_in(self, suffixes: tuple[str, ...] = ("",)) -> None:
        """The files the archive would read where they lie (those whose names end with one
        of ``suffixes``), copied into bdist_dir for a step that reads or rewrites them there."""
        copied = [member for member in self.by_reference if member.name.endswith(suffixes)]
        self.by_reference = tuple(member for member in self.by_reference if not member.name.endswith(suffixes))
        root = self.archive_root
        for member in copied:
            assert root is not None, "_make_wheel sets archive_root before by_reference"
            target = Path(root, member.name)
            if target.exists():  # the tree's file wins in the archive too
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(member.source, target)
            target.chmod(stat.S_IMODE(target.stat().st_mode) | member.add_mode)

    def _compression_method(self) -> int:
        """``--compression`` (stored or deflated) as a zip method number."""
        methods = {"stored": STORED, "deflated": DEFLATED}
        value = self.compression
        if isinstance(value, int) and value in methods.values():
            return value
        if str(value).lower() in methods:
            return methods[str(value).lower()]
        raise BuildkitError(f"bdist_wheel --compression={value!r} is not a compression buildkit writes.",
                            "Use --compression=deflated (the default) or --compression=stored.")
