"""What a Project's build links from other distributions, and what follows from it: the
declared library dependencies whose condition holds, the project's own library wheel under a
python-only build, NVIDIA's CUDA runtime wheel; the requirements that pin them; the loader
that preloads them (``_native.py``), written with the version module."""

from __future__ import annotations

from buildkit._util import console
from buildkit.config.modes import WheelMode
from buildkit.package.cuda_runtime import cuda_runtime_dependency, system_runtime
from buildkit.package.dependencies import (
    FoundDependency,
    find_dependency,
    is_shared_object,
    loader_table,
    needed_libraries,
    needed_sonames,
    needed_through,
    pinned_requirements,
)
from buildkit.package.dependencies import record as record_dependencies
from buildkit.package.nvidia_libraries import cuda_major
from buildkit.package.split import (
    native_loader_text,
    python_only_dependency,
    python_only_hint,
    withdraw_native_loader,
    write_native_loader,
)
from buildkit.package.version import write_version_file
from buildkit.project.view import ProjectView


def requirements(project: ProjectView) -> list[str]:
    """Base requirements, extra ones from the environment, the pins of what the build links."""
    settings = project.settings
    if project.mode is WheelMode.LIBRARY_ONLY:
        # C++ libraries, headers and CMake files: nothing to import; only the CUDA runtime they link.
        return pinned_requirements([], [found.requirement() for found in project.cuda_runtime()])
    base = [*settings.dependencies, *project.options.extra_requirements]
    if project.plan.for_sdist:  # nothing is built against yet: the wheel built from the sdist pins the versions
        # (a conditional dependency is the wheel's to require, when its build links it)
        return base + [declared.distribution for declared in settings.library_dependencies if declared.when is None]
    # A python-only wheel needs exactly this build's library wheel: known without looking for it.
    own = [f"{settings.library_distribution}=={project.version}"] if project.mode is WheelMode.PYTHON_ONLY else []
    decision = project.library_decision
    declared = ([found.requirement() for found in project.declared_dependencies] if project.built or
                not decision.conditional() else decision.pins_before_the_build(settings.project_name))
    return pinned_requirements(base, [*own, *declared, *(found.requirement() for found in project.cuda_runtime())])


def declared_dependencies(project: ProjectView) -> list[FoundDependency]:
    """The ``library-dependencies`` whose condition holds, as found where the build runs."""
    settings = project.settings
    return [find_dependency(d, project=settings.project_name) for d in settings.library_dependencies
            if project.library_decision.holds[d.distribution]]


def library_dependencies(project: ProjectView) -> list[FoundDependency]:
    """The other distributions' libraries the build links: for a python-only wheel the project's own
    library distribution (exactly this version), then the declared ones."""
    if project.mode is not WheelMode.PYTHON_ONLY:
        return project.declared_dependencies
    settings = project.settings
    library = settings.library_distribution
    hint = python_only_hint(library, project.version, mode_variable=settings.library_only_variable)
    own = find_dependency(python_only_dependency(library), project=settings.project_name,
                          required_version=project.version, hint=hint)
    return [own, *project.declared_dependencies]


def cuda_runtime(project: ProjectView) -> list[FoundDependency]:
    """NVIDIA's CUDA runtime wheel, once built, when a binary needs its libcudart, or one of NVIDIA's
    libraries it links does (libcurand; its wheel does not require the runtime's) (``cuda-runtime``)."""
    if not project.built or not project.cuda_toolkit:
        return []
    torch_cuda = project.cuda_request.torch_cuda
    cudart = cuda_runtime_dependency(project.settings.cuda_runtime, project.cuda_toolkit, project.linked_sonames,
                                     torch_cuda)
    if cudart is None:
        return []
    if not f"{project.cuda_toolkit}.".startswith(f"{cudart.version}."):
        console.info(f"{project.settings.project_name} requires {cudart.distribution}>={cudart.version}, the "
                     f"CUDA of the torch it builds against, not nvcc's {project.cuda_toolkit}: torch pins its "
                     "runtime and loads it, and an extension compiled by a newer nvcc of the same major runs on it "
                     "(cpp_extension allows a minor version apart too)")
    return [cudart]


def runtime_dependencies(project: ProjectView) -> list[FoundDependency]:
    """Everything the wheel's binaries find in other distributions at run time."""
    return [*project.library_dependencies, *project.cuda_runtime()]


def linked_sonames(project: ProjectView) -> set[str]:
    """What the binaries the build installed name in DT_NEEDED, and what the libraries of NVIDIA's
    wheels among them need in turn (libcurand: libcudart), which the loader must preload first."""
    needed = needed_sonames(p for p in project.install_manifest if is_shared_object(p.name))
    return {*needed, *needed_through(needed, project.library_dependencies)}


def writes_native_loader(project: ProjectView) -> bool:
    """Whether the build writes ``<package>/_native.py``: when it preloads or links other
    distributions' libraries, but never into a buildkit.torch project (whose setup.py imports
    torch, which loads its libraries, as cpp_extension's extensions expect)."""
    settings = project.settings
    linked = any(project.library_decision.holds.values())
    return bool(settings.preload_libraries or linked) and not settings.generated_source


def editable_preload_loader(project: ProjectView) -> str:
    """The generated loader's code for an editable wheel's import hook to run before the project
    is first imported: it preloads NVIDIA's CUDA runtime and library wheels the build links,
    whose folders its binaries' RUNPATH does not name
    (:func:`buildkit.project.cmake_inputs.develop_rpath_defines`).  Empty for any other build,
    and in a buildkit.torch project (torch loads them)."""
    if not project.target.editable_wheel or project.settings.generated_source:
        return ""
    found = [dep for dep in runtime_dependencies(project)
             if dep.search == "cuda" or (dep.site_dir and cuda_major(dep.lib_dirs) is not None)]
    if not found:
        return ""
    settings = project.settings
    return native_loader_text(package=settings.package, library_distribution=settings.library_distribution,
                              version=project.version, preload=[],
                              dependencies=loader_table(found, needed_libraries(project.linked_sonames, found)))


def write_generated_files(project: ProjectView) -> bool:
    """The version module (``<package>/version.py``) and ``_native.py``, each rewritten only when
    its content changes, never over a file buildkit did not write.  Records what the build links for
    `buildkit wheels` (a library-only build too).  Whether a file changed."""
    settings, target = project.settings, project.target
    found = runtime_dependencies(project)
    if target.staged:  # for `buildkit wheels` (auditwheel's excludes): nothing on the develop path reads it
        record_dependencies(project.build_dir, found, system_runtime(settings.cuda_runtime, project.cuda_toolkit))
    if project.mode is WheelMode.LIBRARY_ONLY or not target.package_dir.is_dir():
        return False
    # A build type is a CMake build's: a project without one has none to record.
    extra = {"build_type": project.build_type} if settings.cmake else {}
    changed = bool(settings.version_module) and write_version_file(
        target.package_dir, project.resolved_version, extra=extra, name=settings.version_module)
    if not writes_native_loader(project):
        # (never in a buildkit.torch project's package, which the project's own code fills)
        return (not settings.generated_source and withdraw_native_loader(target.package_dir)) or changed
    dependencies = loader_table(found, needed_libraries(project.linked_sonames, found)) if found else []
    loader = write_native_loader(target.package_dir, package=settings.package,
                                 library_distribution=settings.library_distribution, version=project.version,
                                 preload=settings.preload_libraries, dependencies=dependencies)
    return loader or changed
