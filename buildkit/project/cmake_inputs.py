"""What a Project's configure is told besides the forwarded variables: the ``-D`` definitions
buildkit adds and CMake's package search path, each from the project's parts."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from packaging.version import Version

from buildkit._util import console
from buildkit._util.resources import cmake_dir
from buildkit.builder.build_state import LINKER_SCRIPT
from buildkit.builder.configure.arguments import DEFAULT_INSTALL_RPATH
from buildkit.builder.configure.build_env import BuildEnvironment
from buildkit.builder.configure.torch_project import compiler_defines
from buildkit.builder.toolchain import linker_script
from buildkit.builder.toolchain.cuda_toolkit import toolkit_defines
from buildkit.config.modes import CudaRuntime
from buildkit.package.dependencies import FoundDependency
from buildkit.package.metadata_dir import metadata_dir
from buildkit.package.nvidia_libraries import check_cuda_major, cmake_library_defines, cuda_major
from buildkit.package.split import mode_defines
from buildkit.package.version import cmake_version_defines
from buildkit.package.wheel_root import skbuild_defines
from buildkit.project.view import ProjectView


def extra_defines(project: ProjectView) -> dict[str, str]:
    """What buildkit adds to every configure besides the forwarded variables."""
    return {"CMAKE_PROJECT_TOP_LEVEL_INCLUDES": str(cmake_dir() / "BuildkitTopLevel.cmake"),
            **cmake_version_defines(project.version),
            "BUILDKIT_METADATA_DIR": metadata_dir(project.build_dir).as_posix(),
            **mode_defines(project.mode, project.library_prefix), **dependency_defines(project),
            **linker_script_defines(project),
            **project.python_api.defines(skbuild=project.plan.wheel_root_install),
            **wheel_root_defines(project),
            **(compiler_defines(project.options) if project.settings.generated_source else {}),
            **cuda_toolkit_defines(project), **nvidia_library_defines(project), **develop_rpath_defines(project)}


def linker_script_defines(project: ProjectView) -> dict[str, str]:
    """CMake flags for the prioritized-text linker script, when asked for."""
    linker_script.maybe_recommend(project.options.prioritized_text, platform.machine(), sys.platform)
    if not project.options.prioritized_text:
        return {}
    return linker_script.cmake_defines(project.root / project.settings.prioritized_text_file,
                                       project.build_dir / LINKER_SCRIPT)


def dependency_defines(project: ProjectView) -> dict[str, str]:
    """``<Name>_ROOT`` of each ``cmake.root`` entry point of the build environment, then of each
    library dependency (``<cmake-package>_ROOT``): its copy wins over any other."""
    environment = project.build_environment
    return {**environment.root_defines(),
            **{f"{d.cmake_package}_ROOT": environment.mirrored(str(d.prefix_path))
               for d in project.library_dependencies if d.cmake_package}}


def cuda_toolkit_defines(project: ProjectView) -> dict[str, str]:
    """CMake's CUDA compiler and toolkit root, where buildkit chose them (``cuda-toolkit``)."""
    choice = project.cuda_toolkit_choice
    root = project.build_environment.mirrored(str(choice.toolkit.root)) if choice.toolkit else ""
    return toolkit_defines(choice, root, project.options.cmake_defines)


def nvidia_library_defines(project: ProjectView) -> dict[str, str]:
    """FindCUDAToolkit's ``CUDA_<name>_LIBRARY`` for each library of NVIDIA's library wheels among
    the library dependencies: the development link in the mirror of the wheel's ``nvidia``
    folder (mirrored for it, whichever toolkit compiles), so that ``CUDA::cublas`` is the wheel's.
    A wheel of another CUDA major than the toolkit's is refused here, before CMake runs."""
    environment, toolkit = project.build_environment, project.cuda_toolkit_choice.toolkit
    defines: dict[str, str] = {}
    for dependency in project.library_dependencies:
        major = cuda_major(dependency.lib_dirs)
        if major is None:
            continue
        check_cuda_major(dependency.distribution, dependency.version, major, toolkit.major if toolkit else None)
        site = _mirrorable_site(environment, dependency)
        if site is None:
            continue
        for lib_dir in dependency.lib_dirs:
            environment.add_toolkit(Path(site, lib_dir))
            defines.update(cmake_library_defines(site, lib_dir, dependency.libraries,
                                                 Path(environment.mirrored(os.path.join(site, lib_dir)))))
    named = {name for name, _ in project.options.cmake_defines}
    return {name: value for name, value in defines.items() if name not in named}


def _mirrorable_site(environment: BuildEnvironment, dependency: FoundDependency) -> str | None:
    """The build environment's site folder that holds ``dependency``, as the environment spells
    it; None, said by name, when it is in none of them (CMake then finds the library its own way)."""
    site = next((folder for folder in environment.site_dirs
                 if os.path.realpath(folder) == os.path.realpath(dependency.site_dir)), None)
    if site is None:
        console.warn(f"{dependency.distribution} is installed in {dependency.site_dir}, which is none of the build "
                     f"environment's site folders: FindCUDAToolkit finds its libraries its own way.")
    return site


def develop_rpath_defines(project: ProjectView) -> dict[str, str]:
    """A develop build's install RPATH: ``$ORIGIN``, then the library folders of NVIDIA's wheels
    where this build found them (the runtime's, when the toolkit comes from the wheels; each
    NVIDIA library dependency's).  A wheel reaches them through the rpath its packaging sets,
    relative to site-packages; a develop build's binaries lie in the source tree, so without
    this one linking the shared CUDA runtime would not load from the wheels alone.  An editable
    wheel's binaries name none of them: the environment the build found them in may be an
    isolated build's, gone once the wheel is built (a RUNPATH into a removed folder under /tmp,
    which anyone could create again), and the wheel's import hook preloads them from where they
    are installed (:func:`buildkit.project.linking.editable_preload_loader`).  A ``-D
    CMAKE_INSTALL_RPATH`` of the user's wins, as does the project's own ``set()``."""
    origin = DEFAULT_INSTALL_RPATH.get(sys.platform)
    named = {name for name, _ in project.options.cmake_defines}
    if project.target.staged or origin is None or "CMAKE_INSTALL_RPATH" in named:
        return {}
    choice, folders = project.cuda_toolkit_choice, []
    if choice.toolkit is not None and choice.from_wheels and project.settings.cuda_runtime is CudaRuntime.WHEEL:
        folders.append(str(choice.toolkit.root / "lib"))
    folders += [str(Path(d.site_dir, lib_dir)) for d in project.library_dependencies
                if cuda_major(d.lib_dirs) is not None for lib_dir in d.lib_dirs]
    if folders and project.target.editable_wheel:
        loads = ("torch, which the project imports first, loads them" if project.settings.generated_source else
                 "the editable install preloads them from where their wheels are installed, at the first import "
                 f"of {project.settings.package}")
        console.info(f"the editable install's binaries get no RUNPATH into {', '.join(dict.fromkeys(folders))}, "
                     "where this build found NVIDIA's libraries (the front end may install the editable wheel "
                     f"elsewhere, and an isolated build's environment is removed after it): {loads}")
        return {}
    return {"CMAKE_INSTALL_RPATH": ";".join(dict.fromkeys([origin, *folders]))} if folders else {}


def wheel_root_defines(project: ProjectView) -> dict[str, str]:
    """scikit-build-core's ``SKBUILD_*`` variables, in wheel-root mode."""
    if not project.plan.wheel_root_install:
        return {}
    version = Version(project.version)
    return skbuild_defines(project_name=project.settings.project_name, public_version=version.public,
                           release=version.release, platlib=project.target.install_root,
                           build_dir=project.build_dir, state="wheel" if project.target.staged else "editable")


def prefix_path(project: ProjectView) -> list[str]:
    """CMake's package search path: each library dependency's prefix, then the build environment's."""
    environment = project.build_environment
    found = [environment.mirrored(str(d.prefix_path)) for d in project.library_dependencies]
    return list(dict.fromkeys([*found, *environment.prefix_path()]))
