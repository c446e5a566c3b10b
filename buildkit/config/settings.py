"""The ``[tool.buildkit]`` table of a consuming project's ``pyproject.toml``.

Every key is declared once, as a field of :class:`ProjectSettings` or of one of its
sub-table dataclasses (name, type, default, documentation, any rule beyond the
type); :mod:`buildkit.config.schema` reads the table strictly against those
declarations and the reference in ``docs/configuration.md`` is generated from them.
Keys that are also build options (``build-type``, ``max-jobs``...) are declared in
:mod:`buildkit.config.options`: here they are only collected, as raw defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from buildkit._util.interpreter import DEFAULT_BUILD_DIR, expand_build_dir
from buildkit._util.switches import switch_word
from buildkit.config.build_dir import check_build_dir
from buildkit.config.modes import CudaRuntime, InstallPrefix, VersionPolicy, WheelMode
from buildkit.config.pyproject import TABLE, buildkit_table, read_pyproject
from buildkit.config.python_layout import PythonLayout, detect_layout, nested_package
from buildkit.config.schema import KeyDoc, describe, keys_needing_cmake, read_table, setting
from buildkit.config.value_rules import (
    SCRIPT_NAME_FORM,
    are_globs,
    are_inside_project,
    is_condition,
    is_distribution_name,
    is_dotted_name,
    is_entry_point,
    is_inside_project,
    is_install_dir,
    is_module_path,
    is_positive,
    is_py_api,
    is_script_name,
)
from buildkit.errors import ConfigError

_TITLE = f"[{TABLE}]"


_WHEN_DOC = ("CMake cache condition: variable names joined by `and`/`or`, each optionally preceded by `not`, "
             "e.g. `USE_CUDA and not USE_ROCM`; a variable missing from the cache is off.")


def _when(purpose: str, **default: Any) -> Any:
    """A ``when`` key: what the condition gates, then the condition syntax.  A condition reads
    the CMake cache, so only a CMake build has one."""
    return setting(f"{purpose} {_WHEN_DOC}", kind="condition", check=is_condition, needs_cmake=True, **default)


# -------------------------------------------------------------- sub-tables

@dataclass(frozen=True)
class StubExtension:
    """``extension``: the thin ``_C`` stub that ``build_ext`` compiles and links."""

    name: str = setting("Dotted module name of the stub, e.g. `pkg._C`.", kind="dotted module name",
                        check=is_dotted_name)
    sources: tuple[str, ...] = setting("C sources of the stub, relative to the project, e.g. `[\"csrc/stub.c\"]`.",
                                       kind="non-empty list of strings", check=bool)
    libraries: tuple[str, ...] = setting("CMake-built libraries the stub links, e.g. `[\"pkg_python\"]`.", default=())
    rpath: str = setting("Folder under the package that holds those libraries; the stub's rpath points there.",
                         default="lib")
    include_dirs: tuple[str, ...] = setting("Include folders besides the package's own `include/`.", default=())
    define_macros: dict[str, str] = setting("Preprocessor macros of the stub, `NAME = \"VALUE\"`.",
                                            default_factory=dict)


@dataclass(frozen=True)
class CMakeExtension:
    """One of ``cmake-extensions``: a module CMake builds and installs into the package tree."""

    name: str = setting("Dotted module name, e.g. `pkg.functional._C`.", kind="dotted module name",
                        check=is_dotted_name)
    when: str | None = _when("Register the module only when this CMake cache condition holds.",
                             default=None)


@dataclass(frozen=True)
class OptionalPackage:
    """One of ``optional-packages``: a subpackage that ships only when a condition holds."""

    package: str = setting("Dotted name of the subpackage, e.g. `pkg.functional`.", kind="dotted module name",
                           check=is_dotted_name)
    when: str = _when("Ship the subpackage only when this CMake cache condition holds.")


@dataclass(frozen=True)
class Script:
    """One of ``scripts``: a console script."""

    name: str = setting("Command name, e.g. `pkg-info`.", kind=f"script name ({SCRIPT_NAME_FORM})",
                        check=is_script_name)
    target: str = setting("Function it runs, `module:function`.", kind="entry point (`module:function`)",
                          check=is_entry_point)
    when: str | None = _when("Install the script only when this CMake cache condition holds.",
                             default=None)


@dataclass(frozen=True)
class LibraryDependency:
    """One of ``library-dependencies``: another distribution's native libraries this project links."""

    distribution: str = setting("Its distribution name, e.g. `libfmt`, `torch`, `nvidia-cublas`.",
                                kind="distribution name", check=is_distribution_name)
    cmake_package: str | None = setting(
        "The package `find_package()` looks for in it, e.g. `fmt` or `Torch`: buildkit points "
        "`<cmake-package>_ROOT` at the distribution's folder, so no other copy on the system wins.", default=None)
    version: VersionPolicy = setting(
        "The `Requires-Dist` written from the version found at build time: `exact` (`==3.4.1`; torch's local "
        "label such as `+cu130` is left out), `same-minor` (`>=3.4.1,==3.4.*`) or `same-major` "
        "(`>=3.4.1,==3.*`).", default=VersionPolicy.SAME_MAJOR)
    when: str | None = _when(
        "Link, require and preload it only when this condition holds, e.g. `USE_CUDA and USE_CUBLAS`. buildkit "
        "finds library dependencies before CMake runs, so the condition is read then from what the configure "
        "will be told (the forwarded variables of the environment and config settings, `-D` in CMAKE_ARGS) over "
        "the build folder's cache; the PEP 517 hook asks for the distribution as a build requirement when it "
        "holds. If the cache after configure disagrees (a CMake default or a `FORCE`), the build stops and "
        "says which variable to set.", default=None)


_GLOBS = "glob or non-empty list of globs"
_GLOBS_DOC = ("relative to the package directory: `*`, `?` and `[..]` stay inside one folder, a `**` segment "
              "spans folders (`include/**/*.h`).")


@dataclass(frozen=True)
class PackageDataEntry:
    """One of ``package-data``: files of the package tree shipped in some wheels."""

    include: tuple[str, ...] = setting("Files to ship, " + _GLOBS_DOC, kind=_GLOBS, check=are_globs,
                                       lone_string=True)
    exclude: tuple[str, ...] = setting("Files among those not to ship, " + _GLOBS_DOC, kind=_GLOBS,
                                       check=are_globs, lone_string=True, default=())
    modes: frozenset[WheelMode] | None = setting(
        "Wheels the rule applies to. Unset: every wheel.",
        kind="wheel mode or list of wheel modes (`full`, `library-only`, `python-only`)",
        check=bool, lone_string=True, default=None)
    when: str | None = _when("Apply the rule only when this CMake cache condition holds; while it does not, "
                             "its files are withheld even where another rule matches them.",
                             default=None)


# ----------------------------------------------------------- the main table

@dataclass(frozen=True)
class ProjectSettings:
    """The validated ``[tool.buildkit]`` table plus what buildkit takes from ``[project]``."""

    root: Path
    project_name: str
    # [project] dynamic: the metadata fields buildkit may supply to setuptools.
    dynamic: frozenset[str] = frozenset()
    # The build-option keys of the table (build-type...), raw: load_options parses them.
    option_defaults: Mapping[str, Any] = field(default_factory=dict)
    # The keys written in the table that only a CMake build reads, with their path (`cmake = false` refuses them).
    cmake_only_keys: tuple[str, ...] = ()
    # The fields written in [project] (its keys), which setuptools takes as they are.
    project_fields: frozenset[str] = frozenset()
    # [project] version when it is not dynamic: then it is the version, as written.
    static_version: str | None = None
    # [tool.setuptools], read for the layout when `packages` is not set.
    setuptools_table: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # A buildkit.torch project (config/drop_in.py): the folder, inside the build folder, that
    # holds the CMake project buildkit writes from its setup.py (None: the project's own CMake
    # project), and the folders whose listing that setup.py's extensions came from.
    generated_source: str | None = None
    configuration_inputs: tuple[Path, ...] = ()
    layout: PythonLayout = field(init=False)
    build_dir_template: str = field(init=False)  # build-dir as written: build_dir is it filled in

    package: str = setting(
        "Import package that CMake installs into (`<package>/lib`, `include`, `share/cmake`). "
        "Default: the `[project]` name with `-` and `.` replaced by `_`, unless `packages` (or `[tool.setuptools]`) "
        "declares top-level packages without that name: then the first of them.",
        kind="dotted module name", check=is_dotted_name, default=None, derived=True)
    packages: tuple[str, ...] = setting(
        "Folders of the top-level import packages, relative to the project, e.g. `[\"src/pkg\"]` "
        "(scikit-build-core's `wheel.packages`). Default: `[tool.setuptools]` `package-dir`/`packages`, else the "
        "first of `src/<package>`, `python/<package>` and `<package>` that exists.", default=())
    py_modules: tuple[str, ...] = setting(
        "Top-level modules beside the packages (`pmod` for `src/pmod.py`), in the package root. "
        "Default: `[tool.setuptools]` `py-modules`.", kind="list of module names",
        check=lambda names: all(n.isidentifier() for n in names), default=())
    cmake: bool = setting(
        "`false`: the project has no CMake part (scikit-build-core's `wheel.cmake = false`). No CMake runs, no "
        "`CMakeLists.txt` is needed, and the wheel is pure (`py3-none-any`) unless the package folders hold native "
        "binaries. The *CMake only* keys, and CMake build options written here (`build-type`...), are refused "
        "with it; see [Without CMake](#without-cmake).", default=True)
    install_prefix: InstallPrefix = setting(
        "Where `cmake --install` puts files: `package` (the package's folder, PyTorch's layout: "
        "`install(TARGETS t DESTINATION lib)`) or `wheel-root` (the package root, scikit-build-core's layout: "
        "`install(TARGETS m DESTINATION <package>)`, `DESTINATION .` for a top-level module; buildkit then "
        "defines scikit-build-core's `SKBUILD_*` variables). Default: `package` when the package folder exists "
        "and the top-level CMakeLists.txt does not mention `SKBUILD`, else `wheel-root`. Library-only wheels "
        "always use `package`.", default=None, derived=True, needs_cmake=True)
    install_dir: str = setting(
        "A folder of the wheel's root that the install prefix moves into (scikit-build-core's "
        "`wheel.install-dir`), written with `/`: with `\"cmake_dirs\"`, `install(FILES main.py DESTINATION .)` "
        "puts `cmake_dirs/main.py` into the package tree a develop builds in place and into the wheel. "
        "`SKBUILD_PLATLIB_DIR` stays the wheel's root, where the install may still write. Only the wheel-root "
        "layout has it: set, it makes `wheel-root` the default of `install-prefix`, and `install-prefix = "
        "\"package\"` beside it is refused; a library-only wheel ignores it, saying so. `..`, an absolute "
        "folder, a backslash and scikit-build-core's `${SKBUILD_<TREE>_DIR}` forms are refused.",
        kind="folder below the wheel's root, or `\"\"`", check=is_install_dir, default="", needs_cmake=True)
    cmake_source_dir: str = setting("Folder holding the top-level `CMakeLists.txt`, relative to the project.",
                                    default=".", needs_cmake=True)
    build_dir: Path = setting(
        "The kept CMake build folder, relative to the project. `{soabi}` stands for the interpreter's extension "
        "ABI (`cpython-312-x86_64-linux-gnu`) and `{cache_tag}` for its cache tag (`cpython-312`), so that each "
        "interpreter keeps its own build; a folder without a placeholder is shared, and switching Python "
        "configures it again.", kind="folder", check=check_build_dir, default=Path(DEFAULT_BUILD_DIR))
    cmake_minimum_version: str = setting(
        "Oldest cmake accepted; an older system cmake is replaced by the PyPI one.", default="3.24", needs_cmake=True)
    env_prefix: str = setting(
        "Prefix of the project-named variables `<PREFIX>_EXTRA_INSTALL_REQUIREMENTS` and "
        "`<PREFIX>_CUDA_ARCH_LIST`, and of `<PREFIX>_BUILD_VERSION` and `<PREFIX>_BUILD_NUMBER`, the older names "
        "of `BUILDKIT_RELEASE_VERSION` and `BUILDKIT_BUILD_NUMBER`. "
        "Default: the top-level package name upper-cased.", default=None, derived=True)
    library_only_variable: str = setting("Variable that selects the library-only wheel.",
                                         default="BUILD_LIBTORCH_WHL", needs_cmake=True)
    python_only_variable: str = setting("Variable that selects the python-only wheel.", default="BUILD_PYTHON_ONLY",
                                        needs_cmake=True)
    library_distribution: str = setting(
        "Distribution name of the library-only wheel, pinned by the python-only wheel. "
        "Default: `lib` followed by the `[project]` name; the `[project]` name itself with `library-only = true`.",
        default=None, derived=True, needs_cmake=True)
    version_file: str = setting("File holding the base version; `+git<sha7>` is appended in a git checkout.",
                                default="version.txt")
    version_module: str = setting(
        "The module buildkit generates with `__version__`, relative to the package's folder, e.g. `_version.py`; "
        "`\"\"` generates none. A file there that buildkit did not write (no `# Generated by buildkit` line at its "
        "top) is never overwritten: the build stops and names it.",
        kind="`.py` path inside the package, or `\"\"`", check=is_module_path, default="version.py")
    dependencies: tuple[str, ...] = setting(
        "Install requirements of the wheel (the `[project]` table lists `dependencies` as dynamic).", default=())
    licenses: tuple[str, ...] = setting(
        "Third-party license files concatenated into the wheel's license file, relative to the project (none may "
        "lead outside it, through `..` or a link).", kind="list of paths inside the project",
        check=are_inside_project, default=())
    readme: str = setting("File used as the long description, relative to the project (it may not lead outside "
                          "it, through `..` or a link).", kind="path inside the project", check=is_inside_project,
                          default="README.md")
    allow_outside_links: tuple[str, ...] = setting(
        "Symbolic links that may lead outside the project (or, installed by CMake, outside the install prefix), "
        "as paths relative to the project, e.g. `[\"src/pkg/data/shared.txt\"]` (an installed link: where the "
        "install step puts it in the project's layout). Wheels and sdists ship a link's content, so any other "
        "link out of the project, and every dangling link, stops the build with its name.",
        kind="list of paths inside the project", check=are_inside_project, default=())
    cmake_defines: dict[str, str | bool | int | tuple[str, ...]] = setting(
        "`-D` values passed to every configure (`true`/`false` become `ON`/`OFF`, a list of strings a CMake list "
        "with each `;` inside an item escaped); the environment and config settings override them.",
        default_factory=dict, needs_cmake=True)
    cmake_aliases: dict[str, str] = setting(
        "Environment variables forwarded to CMake under another name (`ENV_NAME = \"CMAKE_NAME\"`).",
        default_factory=lambda: {"CUDA_HOST_COMPILER": "CMAKE_CUDA_HOST_COMPILER"}, needs_cmake=True)
    cmake_forward: tuple[str, ...] = setting(
        "Extra environment variables forwarded to CMake as-is (besides `BUILD_*`, `USE_*`, `CMAKE_*`).", default=(),
        needs_cmake=True)
    extension: StubExtension | None = setting(
        "The thin `_C` stub extension built by `build_ext`; its keys are below.", default=None, needs_cmake=True)
    cmake_extensions: tuple[CMakeExtension, ...] = setting(
        "Extension modules built and installed by CMake, registered with setuptools so wheels include them.",
        default=(), needs_cmake=True)
    optional_packages: tuple[OptionalPackage, ...] = setting(
        "Subpackages shipped only when a CMake cache condition holds.", default=(), needs_cmake=True)
    scripts: tuple[Script, ...] = setting("Console scripts; library-only wheels get none.", default=())
    package_data: tuple[PackageDataEntry, ...] = setting(
        "Package-data rules added to the defaults (headers, CMake files, native libraries). What CMake installs "
        "into the package tree ships without a rule; rules add files it did not install and, with `exclude`, "
        "`modes` or `when`, keep installed ones out of some wheels.", default=())
    wheel_exclude: tuple[str, ...] = setting(
        "Files CMake installs into the package tree that the wheel leaves out, as globs on their path in the wheel "
        "(`pkg/tests/**`): `*`, `?` and `[..]` stay inside one folder, a `**` segment spans folders. Every other "
        "installed file ships, named by a package-data rule or not; one that cannot ship is reported by name and "
        "fails `buildkit wheels`. A pattern that matches no installed file is reported.",
        kind="list of globs", check=are_globs, default=())
    codegen_package: str | None = setting(
        "Subpackage (dotted) holding a code generator that ships in the wheel, e.g. `tensorlet._codegen`.",
        kind="dotted module name", check=is_dotted_name, default=None)
    prioritized_text_file: str = setting(
        "Symbols (one per line) placed first in .text when USE_PRIORITIZED_TEXT_FOR_LD=1.",
        default="cmake/prioritized_text.txt", needs_cmake=True)
    preload_libraries: tuple[str, ...] = setting(
        "Native libraries (CMake target names) that `<package>/_native.py` preloads before the extension, "
        "from the package's own `lib/` or from the installed library distribution.", default=(), needs_cmake=True)
    library_dependencies: tuple[LibraryDependency, ...] = setting(
        "Other distributions' native libraries this project builds against and links (a library-only wheel, "
        "`torch`, NVIDIA's CUDA library wheels such as `nvidia-cublas`, whose CUDA major is their "
        "`nvidia/cu<N>` folder's and whose libraries FindCUDAToolkit's `CUDA::<name>` targets become, see "
        "docs/cuda.md). buildkit finds each where the build runs, puts it on "
        "`CMAKE_PREFIX_PATH`, writes `Requires-Dist` from the version found and its `version` policy, and makes "
        "the wheel find the libraries at run time without copying them: an rpath into the distribution's folder "
        "in site-packages, and `<package>/_native.py`, which checks the version and preloads them (import it "
        "before the extension). `buildkit wheels` keeps them out of auditwheel's repair.", default=(), needs_cmake=True)
    cuda_runtime: CudaRuntime = setting(
        "Where a CUDA 12+ build's `libcudart` comes from at run time: `wheel` (NVIDIA's runtime wheel, "
        "`nvidia-cuda-runtime>=13.0,<14` for a CUDA 13.0 toolkit (`nvidia-cuda-runtime-cu12` for CUDA 12): a "
        "requirement of the wheel that ships the binaries needing it, reached through an rpath into "
        "`site-packages/nvidia/cu13/lib` and the loader's search: already loaded, NVIDIA wheels, conda, system; "
        "auditwheel never copies it), `vendor` (auditwheel copies it into the wheel) or `system` (the machine's "
        "CUDA installation: neither required nor copied). Older toolkits vendor.", default=CudaRuntime.WHEEL,
        needs_cmake=True)
    py_api: str | None = setting(
        "The Python API the wheel's modules are built for, as scikit-build-core's `wheel.py-api`: `cp3X` for the "
        "stable ABI of CPython 3.X and later (a `cp3X-abi3` wheel where the interpreter is a GIL-enabled CPython "
        "3.X or newer, `cp3X-abi3t` on a free-threaded 3.15 or newer; CMake gets `SKBUILD_SABI_VERSION` and "
        "`SKBUILD_SABI_COMPONENT`, and `BUILDKIT_SABI_*` of the same values; elsewhere the interpreter's own tag, "
        "said by name), `py3` or `py2.py3` for modules that do not use Python's C API (`py3-none-<platform>`). "
        "Every extension module of an abi3 wheel must be built for it: one that is not stops the wheel build.",
        kind="one of `cp3X`, `py3` or `py2.py3`", check=is_py_api, default=None, needs_cmake=True)
    smoke_test: str | None = setting(
        "Command `buildkit wheels` runs (in a shell, from an empty folder) in a fresh venv with the built wheel "
        "installed, after `import <package>`; e.g. `python -c 'import pkg; pkg.selftest()'`.", default=None)
    job_memory_mb: int = setting("Memory one compile job needs; caps the default job count.",
                                 kind="positive integer", check=is_positive, default=1024, needs_cmake=True)
    cuda_job_memory_mb: int = setting("Memory one nvcc job needs when CUDA is on.", kind="positive integer",
                                      check=is_positive, default=3072, needs_cmake=True)

    def __post_init__(self) -> None:
        # The defaults that depend on the project name, filled in once so that every
        # reader sees a plain string.
        named = (self.package or nested_package(self.root, self.project_name)
                 or self.project_name.replace("-", "_").replace(".", "_"))
        layout = detect_layout(self.root, named, packages=self.packages, py_modules=self.py_modules,
                               setuptools_table=self.setuptools_table)
        if self.package is None:
            # A declared layout whose packages do not include the project's name (packages =
            # ["python/shared_pkg"] in project navigate_editable): its first package is the one.
            tops = list(layout.package_folders)
            object.__setattr__(self, "package", named if named.split(".")[0] in tops or not tops else tops[0])
        object.__setattr__(self, "layout", layout)
        if self.env_prefix is None:
            object.__setattr__(self, "env_prefix", self.package.split(".")[0].upper())
        if self.library_distribution is None:
            object.__setattr__(self, "library_distribution", self.project_name if self.is_library
                               else "lib" + self.project_name.replace("_", "-"))
        # realpath, not resolve(): a symlink loop stays a path (the build folder's claim then
        # names it) instead of raising here.
        object.__setattr__(self, "build_dir_template", str(self.build_dir))
        object.__setattr__(self, "build_dir",
                           Path(os.path.realpath(self.root / expand_build_dir(self.build_dir_template))))
        if self.install_prefix is None:
            pytorch_style = (self.package.split(".")[0] in self.layout.package_folders and not self.uses_skbuild
                             and not self.install_dir)
            object.__setattr__(self, "install_prefix",
                               InstallPrefix.PACKAGE if pytorch_style else InstallPrefix.WHEEL_ROOT)
        elif self.install_dir and self.install_prefix is InstallPrefix.PACKAGE:
            raise ConfigError(
                f"{_TITLE} install-dir = {self.install_dir!r} is set with install-prefix = \"package\": "
                "install-dir moves the install prefix below the wheel's root (scikit-build-core's layout), and the "
                "package layout installs into the package's folder instead.",
                "Remove install-prefix (install-dir makes `wheel-root` its default), or remove install-dir and "
                "name the folder in the install rules' DESTINATION.")

    @property
    def is_library(self) -> bool:
        """Whether the project is a C++ library only (`library-only = true` in the table): its wheels are
        library-only wheels under its own `[project]` name."""
        value = self.option_defaults.get("library-only", False)
        # The option reader checks the value strictly (a bad one stops the load); here, as it reads it.
        return value is True or (isinstance(value, str) and switch_word(value) is True)

    @property
    def uses_skbuild(self) -> bool:
        """Whether the top-level CMakeLists.txt reads scikit-build-core's SKBUILD_* variables
        (it was written for the wheel-root layout)."""
        try:
            return "SKBUILD" in (self.source_dir / "CMakeLists.txt").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False

    @property
    def project_folders(self) -> tuple[Path, ...]:
        """The project's own folders that a build folder must keep clear of: each top-level
        package folder and, when it is not the root, the CMake source folder."""
        folders = [Path(os.path.realpath(self.root / folder)) for folder in self.layout.package_folders.values()]
        if self.source_dir != self.root and not self.generated_source:  # a generated one is the build's own
            folders.append(self.source_dir)
        return tuple(folders)

    @property
    def package_dir(self) -> Path:
        return self.root / self.layout.folder_of(self.package)

    @property
    def package_root(self) -> Path:
        """The folder holding the top-level packages and modules (the project, `src/`...)."""
        return self.root / self.layout.package_root

    @property
    def source_dir(self) -> Path:
        if self.generated_source:
            return self.build_dir / self.generated_source
        return (self.root / self.cmake_source_dir).resolve()


# The reference's rows, in declaration order (sub-tables via KeyDoc.table).
SETTINGS: tuple[KeyDoc, ...] = describe(ProjectSettings)


def setting_default(name: str) -> Any:
    """The declared default of a ``ProjectSettings`` field, for callers without a project."""
    return {f.name: f.default for f in fields(ProjectSettings)}[name]


def load_settings(root: Path | str, option_keys: frozenset[str] = frozenset()) -> ProjectSettings:
    """Read and validate ``<root>/pyproject.toml``.

    ``option_keys`` are the build-option keys (``build-type``...) accepted in the
    table as defaults; :mod:`buildkit.config.options` passes them so that this module
    doesn't need to import it.
    """
    root = Path(root).resolve()
    path = root / "pyproject.toml"
    data = read_pyproject(path)
    if data is None:
        raise ConfigError(f"No pyproject.toml in {root}.",
                          "buildkit reads the project's name from [project] and its build settings from "
                          "[tool.buildkit]; run `buildkit init` to create one, or point buildkit at the project "
                          "folder.")
    project = data.get("project", {})
    name = project.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path} has no [project] name.", "Add `[project]` with `name = \"...\"`.")
    table = buildkit_table(data, path)
    dynamic = project.get("dynamic", [])
    setuptools_table = data.get("tool", {}).get("setuptools", {})
    try:  # the keys, then the layout they and [tool.setuptools] describe
        return ProjectSettings(root=root, project_name=name,
                               **read_table(ProjectSettings, table, (_TITLE,), also_known=option_keys),
                               setuptools_table=setuptools_table if isinstance(setuptools_table, dict) else {},
                               option_defaults={k: v for k, v in table.items() if k in option_keys},
                               cmake_only_keys=tuple(keys_needing_cmake(ProjectSettings, table, (_TITLE,))),
                               dynamic=frozenset(dynamic if isinstance(dynamic, list) else []),
                               project_fields=frozenset(project),
                               static_version=_static_version(project, path))
    except ConfigError as error:
        raise ConfigError(error.message, f"{error.hint} It is read from {path}; docs/configuration.md lists "
                                         "every key.") from None


def _static_version(project: Mapping[str, Any], path: Path) -> str | None:
    if "version" in project.get("dynamic", []):
        return None
    if "version" not in project:  # setuptools would stop on it after the build, in a traceback
        raise ConfigError(f"[project] in {path} has no `version` and does not list \"version\" in `dynamic`.",
                          "Write it as `version = \"1.2.3\"`, or add `dynamic = [\"version\"]` for buildkit to "
                          "supply it (from `version-file`, version.txt by default, plus the git commit; "
                          "docs/configuration.md).")
    version = project["version"]
    if not isinstance(version, str):
        raise ConfigError(f"[project] version in {path} must be a string, not {version!r}.",
                          "Write it as `version = \"1.2.3\"`, or list \"version\" in `dynamic` for buildkit to "
                          "supply it.")
    return version
