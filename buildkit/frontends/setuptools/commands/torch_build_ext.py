"""``buildkit.torch.BuildExtension``: cpp_extension's ``build_ext``, built by CMake.

A project that moves from ``torch.utils.cpp_extension`` to ``buildkit.torch`` keeps its
setup.py and its ``cmdclass={"build_ext": BuildExtension}``; setuptools runs this command
for every build: ``pip install``, ``pip wheel`` and ``python -m build`` (through
bdist_wheel), ``pip install -e`` (editable_wheel, in place), ``setup.py build_ext
--inplace``, and ``buildkit develop``, which runs setup.py in-process for it.  It

1. makes the project's configuration of what setup.py told setuptools (name, version,
   packages, bdist_wheel's ``py_limited_api`` as ``py-api``) and of [tool.buildkit], if any
   (:mod:`buildkit.config.drop_in`);
2. writes the extensions as one CMake project in the build folder
   (:mod:`buildkit.builder.configure.torch_project`), holding the folder's lock from here on;
3. builds it with buildkit's driver: one configure, Ninja, the compiler cache, the install into
   the package tree (in place) or the staging tree (a wheel);
4. leaves it to buildkit's ``build_ext`` to copy the modules where setuptools expects them.

The wheel's requirement on the torch it was built against is written before any command runs
(:mod:`buildkit.frontends.setuptools.torch_metadata`): pip takes a wheel's metadata before the build.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from setuptools.command.build_ext import build_ext as _build_ext

from buildkit._util import console
from buildkit.builder.build_state import TORCH_PROJECT
from buildkit.builder.configure.torch_env import (
    InstalledTorch,
    compiler_findings,
    cpp_extension_limited_api,
    installed_torch,
)
from buildkit.builder.configure.torch_project import TorchModule, TorchProject, write_cmake_project
from buildkit.builder.toolchain import tools as toolchain
from buildkit.config.drop_in import SetupFacts
from buildkit.errors import ConfigError, ToolchainError, reporting_errors
from buildkit.frontends import handoff
from buildkit.frontends.setuptools.commands.build_ext import BuildExt
from buildkit.frontends.setuptools.flow import project_root
from buildkit.package.torch_extension import TorchExtension
from buildkit.project import Project
from buildkit.project.parts import Configuration

OPTIONS = ("no_python_abi_suffix", "use_ninja")  # what cpp_extension's BuildExtension takes


class BuildExtension(BuildExt):
    """setuptools' ``build_ext`` for the extensions of ``buildkit.torch.CppExtension`` and
    ``CUDAExtension``; ``BuildExtension.with_options(no_python_abi_suffix=True)`` names the
    modules ``<name>.so``, as cpp_extension's does."""

    description = "build the buildkit.torch extensions with CMake and Ninja"

    @classmethod
    def with_options(cls, **options: Any) -> type[BuildExtension]:
        """This command with cpp_extension's options (``no_python_abi_suffix``, ``use_ninja``)."""
        _refuse_unknown(options)

        class WithOptions(cls):  # type: ignore[valid-type,misc]  # a subclass of the class it is called on
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **{**kwargs, **options})

        return WithOptions

    def __init__(self, dist: Any, **kwargs: Any) -> None:
        _refuse_unknown(kwargs)
        self.no_python_abi_suffix = bool(kwargs.get("no_python_abi_suffix", False))
        self.use_ninja = bool(kwargs.get("use_ninja", True))
        super().__init__(dist)

    def run(self) -> None:
        reporting_errors(self._build_and_place)

    def get_ext_filename(self, fullname: str) -> str:
        """The module's file: as built, once it is; before (setuptools asks when it finalizes
        its options) the name cpp_extension gives (``.abi3.so`` for py_limited_api, ``.so``
        without the ABI tag for no_python_abi_suffix)."""
        if getattr(self.distribution, "buildkit", None) is not None:
            return super().get_ext_filename(fullname)
        name: str = _build_ext.get_ext_filename(self, fullname)  # type: ignore[no-untyped-call]  # unannotated in the stubs
        if self.no_python_abi_suffix and name.count(".") > 1 + fullname.count("."):
            stem, _, suffix = name.rpartition(".")
            name = f"{stem.rpartition('.')[0]}.{suffix}"
        return name

    def _build_and_place(self) -> None:
        distribution = self.distribution
        extensions = _torch_extensions(self.extensions)
        if not extensions:
            return
        caller = handoff.current_caller()
        root = project_root(str(distribution.script_name or ""))
        torch = installed_torch()
        if torch is None:
            raise ConfigError("torch is not installed in the environment this build runs in, so there is nothing to "
                              "build the extensions against.",
                              "Install torch there, and build with --no-build-isolation (pip, uv, python -m build) "
                              "or `buildkit develop` against it.")
        facts = SetupFacts(
            name=distribution.get_name(), version=distribution.get_version(), layout=_layout(distribution),
            package=_package(extensions, distribution), py_api=_py_limited_api(distribution),
            source_folder=TORCH_PROJECT,
            inputs=tuple(sorted({Path(source).parent for ext in extensions for source in _absolute(root, ext)})))
        configuration = Configuration.of_setup_py(root, facts, None,
                                                  caller.invocation.config_settings if caller else {})
        # setuptools' editable_wheel runs this command in place, for a wheel another environment may install.
        project = Project.of(configuration, staged=not self.inplace,
                             editable_wheel="editable_wheel" in (distribution.commands or ()))
        modules = self._modules(project, extensions, root, torch)
        if not self.use_ninja:
            console.info("BuildExtension use_ninja=False: buildkit builds with CMake and Ninja all the same")
        with project.locked():
            _check_compilers(project, torch, cuda=any("CUDA" in module.languages() for module in modules))
            write_cmake_project(project.settings.source_dir, TorchProject(facts.name, tuple(modules)))
            project.build()
            if caller is not None and caller.torch_build is not None:
                caller.torch_build.project, caller.torch_build.distribution = project, distribution
            if project.options.cmake_only:
                return
            project.write_generated_files()
            # buildkit's build_ext places the modules of this project.
            distribution.buildkit = project  # type: ignore[attr-defined]  # buildkit's own attribute on setuptools' distribution
            super().run()

    def _modules(self, project: Project, extensions: Sequence[TorchExtension], root: Path,
                 torch: InstalledTorch) -> list[TorchModule]:
        """What CMake builds for each extension: ``py_limited_api=True`` for the stable ABI of
        py-api's version (bdist_wheel's py_limited_api), or without that option of the version
        cpp_extension builds for; an abi3 wheel takes only such extensions."""
        api = project.python_api
        if api.ignored_because:
            console.info(f"bdist_wheel py_limited_api = {api.requested}: the extensions are built for this "
                         f"interpreter, and the wheel gets its tag: {api.ignored_because}")
            wheel = self.distribution.command_obj.get("bdist_wheel")
            if wheel is not None and getattr(wheel, "py_limited_api", None):
                wheel.py_limited_api = False  # type: ignore[attr-defined]  # setuptools would still tag the wheel abi3
        modules = []
        for ext in extensions:
            version = None
            if ext.py_limited_api and not api.ignored_because:
                version = api.sabi_version or cpp_extension_limited_api(torch.folder)
                if version is None:
                    raise ConfigError(f"{ext.name} is py_limited_api=True, but neither setup.py's bdist_wheel "
                                      f"py_limited_api nor the cpp_extension of torch {torch.version} says for "
                                      "which Python's stable ABI.",
                                      'Add options={"bdist_wheel": {"py_limited_api": "cp310"}} to setup().')
            elif api.stable_abi and not ext.py_limited_api:
                raise ConfigError(
                    f"setup.py asks bdist_wheel for py_limited_api = {api.requested!r} (a {api.python_tag}-"
                    f"{api.abi_tag} wheel, for every later Python), but {ext.name} is not py_limited_api=True: "
                    "it would be built for this interpreter only.",
                    f"Pass py_limited_api=True to {ext.name}'s extension (it must then use only Python's limited "
                    "API), or drop the bdist_wheel option.")
            modules.append(ext.module(root, limited_api=version, abi_suffix=not self.no_python_abi_suffix,
                                      torch_cuda=torch.cuda))
        return modules


def _refuse_unknown(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        reporting_errors(lambda: _raise(ConfigError(
            f"BuildExtension got the option(s) {', '.join(map(repr, unknown))}, which buildkit.torch does not "
            "know.", f"Its options are cpp_extension's: {', '.join(OPTIONS)}.")))


def _raise(error: Exception) -> None:
    raise error


def _torch_extensions(extensions: Sequence[Any]) -> list[TorchExtension]:
    others = [ext.name for ext in extensions if not isinstance(ext, TorchExtension)]
    if others:
        raise ConfigError(
            f"ext_modules holds {', '.join(others)}, made by something else than buildkit.torch's CppExtension or "
            "CUDAExtension: buildkit.torch's BuildExtension builds only those (with CMake).",
            "Make each one with `from buildkit.torch import CppExtension, CUDAExtension` (a plain C extension "
            "too: CppExtension compiles .c sources as C).")
    return list(extensions)


def _absolute(root: Path, ext: TorchExtension) -> list[Path]:
    return [root / source for source in ext.sources]


def _layout(distribution: Any) -> dict[str, Any]:
    """setup()'s layout keywords, as [tool.setuptools] spells them (only those given)."""
    given = {"package-dir": dict(distribution.package_dir or {}), "packages": list(distribution.packages or []),
             "py-modules": list(distribution.py_modules or [])}
    return {key: value for key, value in given.items() if value}


def _package(extensions: Sequence[TorchExtension], distribution: Any) -> str:
    """The import package the extension modules go into: the first one's top-level package."""
    for ext in extensions:
        if "." in ext.name:
            return ext.name.split(".")[0]
    packages = [name for name in distribution.packages or [] if "." not in name]
    return str(packages[0] if packages else distribution.get_name().replace("-", "_").replace(".", "_"))


def _py_limited_api(distribution: Any) -> str | None:
    """bdist_wheel's py_limited_api: the command's (command line included) once it exists, else
    setup()'s ``options`` and setup.cfg's."""
    wheel = distribution.command_obj.get("bdist_wheel")
    if wheel is not None:
        value = getattr(wheel, "py_limited_api", None)
    else:
        value = distribution.get_option_dict("bdist_wheel").get("py_limited_api", (None, None))[1]
    return str(value) if value else None


def _check_compilers(project: Project, torch: InstalledTorch, *, cuda: bool) -> None:
    """cpp_extension's checks before it compiles (TORCH_DONT_CHECK_COMPILER_ABI skips the C++
    compiler's): warnings, and an nvcc of another CUDA major version than torch's stops the build."""
    options = project.options
    recorded = toolchain.load_recorded(project.build_dir)
    compilers = recorded.compilers if recorded is not None and recorded.compilers.cxx is not None else \
        toolchain.find_compilers(cuda, cxx=options.cxx, cudacxx=options.cudacxx or _cuda_home_nvcc(project))
    warnings, error = compiler_findings(torch, compilers, cuda=cuda,
                                        check_abi=not options.torch_dont_check_compiler_abi)
    for warning in warnings:
        console.warn(warning)
    if error:
        raise ToolchainError(error, "Install the CUDA toolkit of torch's CUDA version and point CUDA_HOME (or "
                                    "CUDACXX) at it, or install the torch build for your toolkit.")


def _cuda_home_nvcc(project: Project) -> str | None:
    """The nvcc the build compiles with: the wheels' (``cuda-toolkit``), CUDA_HOME's, or the one on PATH."""
    choice = project.cuda_toolkit_choice
    if choice.toolkit is not None and choice.from_wheels:
        return str(choice.toolkit.nvcc)
    toolkit = project.options.cuda_home or project.options.cuda_path
    return str(Path(toolkit, "bin", "nvcc")) if toolkit else shutil.which("nvcc")
