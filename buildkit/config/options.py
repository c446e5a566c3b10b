"""Build options: PEP 517 config settings, the environment and ``[tool.buildkit]``.

This is the only module that reads ``os.environ`` (callers pass a mapping in, so
tests never touch the real environment).  Every variable buildkit interprets is a
field of :class:`BuildOptions`, declared once with :func:`option` (variable, parser,
``[tool.buildkit]`` key, documentation); :func:`option_table`, the docs and the
bad-value tests are generated from those declarations.  Precedence, highest first:
config settings (``pip -C`` / ``python -m build -C``), the environment,
``[tool.buildkit]``, the declared defaults.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildkit._util import console
from buildkit._util.switches import (
    EDITABLE_REBUILD_VARIABLE,
    EDITABLE_VERBOSE_VARIABLE,
    FALSE_WORDS,  # noqa: F401  re-exported with the parsers below
    TRUE_WORDS,  # noqa: F401  re-exported with the parsers below
)
from buildkit.config.forwarding import (
    CMAKE_ENVIRONMENT_VARIABLES,
    HANDLED_VARIABLES,
    argument_definitions,
    define_value,
    forwarded_defines,
    refuse_reserved_arguments,
    refuse_unused_config_settings,
)
from buildkit.config.modes import CudaToolkit, Distribution, WheelMode
from buildkit.config.parsing import (  # noqa: F401  re-exported: the parsers belong to the options' API
    BUILD_TYPES,
    check_text,
    parse_args,
    parse_bool,
    parse_build_type,
    parse_build_type_list,
    parse_cuda_toolkit,
    parse_distribution,
    parse_epoch,
    parse_generator,
    parse_nonempty,
    parse_positive_int,
    parse_requirements,
    parse_text,
)
from buildkit.config.release import RELEASE_NUMBER_VARIABLE, RELEASE_VERSION_VARIABLE, merge_project_named
from buildkit.config.schema import with_article
from buildkit.config.settings import ProjectSettings, setting_default
from buildkit.errors import ConfigError, ModeConflictError

if TYPE_CHECKING:
    from rich.table import Table

# ----------------------------------------------------------------- the table

@dataclass(frozen=True)
class OptionSource:
    """Where a BuildOptions field is read from, how it is parsed, what it does."""

    # Environment variable / config-setting name; a template for the project-named
    # ones: {prefix}, {library_only_variable}, {python_only_variable} (from the settings).
    env: str
    parse: Callable[[str, str], Any]
    kind: str
    doc: str
    key: str | None = None  # [tool.buildkit] key, if the project may set a default
    needs_cmake: bool = True  # read by the CMake build only: unused by a project with `cmake = false`


_OPTION = "buildkit.option"


def option(env: str, parse: Callable[[str, str], Any], kind: str, doc: str, *, key: str | None = None,
           default: Any = None, needs_cmake: bool = True) -> Any:
    """A BuildOptions field that is a build option: its one declaration."""
    return field(default=default, metadata={_OPTION: OptionSource(env, parse, kind, doc, key, needs_cmake)})


@dataclass(frozen=True)
class Option:
    """One row of the option table: a BuildOptions field with its variable name filled in."""

    field: str  # attribute of BuildOptions
    env: str  # environment variable / config-setting name
    key: str | None  # [tool.buildkit] key, if the project may set a default
    parse: Callable[[str, str], Any]
    default: Any
    kind: str
    doc: str
    needs_cmake: bool = True


def option_table(settings: ProjectSettings | None = None) -> tuple[Option, ...]:
    """Every option, with the project-named variables filled in from ``settings``."""
    names = {
        "prefix": settings.env_prefix if settings else "<PREFIX>",
        "library_only_variable": (settings.library_only_variable if settings
                                  else setting_default("library_only_variable")),
        "python_only_variable": (settings.python_only_variable if settings
                                 else setting_default("python_only_variable")),
    }
    return tuple(Option(f.name, source.env.format(**names), source.key, source.parse, f.default, source.kind,
                        source.doc, source.needs_cmake)
                 for f in fields(BuildOptions) if (source := f.metadata.get(_OPTION)))


def buildkit_switches(table: Sequence[Option]) -> frozenset[str]:
    """Variables that steer buildkit itself and are never forwarded to CMake."""
    return frozenset(o.env for o in table if o.env) - HANDLED_VARIABLES - {"CMAKE_OSX_SYSROOT"}


def option_keys() -> frozenset[str]:
    return frozenset(o.key for o in option_table() if o.key)


# ------------------------------------------------------------ the result

@dataclass(frozen=True)
class ArchitectureRequest:
    """A CUDA architecture list and the variable it came from."""

    value: str
    variable: str
    # TORCH_CUDA_ARCH_LIST: PyTorch's meaning (no PTX added to the newest entry).
    pytorch_exact: bool
    # Asked for by a variable or config setting (this build's request), not [tool.buildkit]'s
    # cuda-arch-list (the wheel's list, of which a develop build compiles one).
    from_variable: bool = True


# The words for BuildOptions.sources' layers in a message: a forwarded variable's, and CMAKE_ARGS's.
_DEFINE_ORIGINS = {"[tool.buildkit]": "[tool.buildkit] cmake-defines", "environment": "the environment",
                   "config setting": "a config setting"}
_ARGUMENT_ORIGINS = {"environment": "CMAKE_ARGS", "config setting": "the CMAKE_ARGS config setting"}


@dataclass(frozen=True)
class BuildOptions:
    """Everything the rest of buildkit needs from the environment, validated once.

    Each build option is declared once, by :func:`option`; :func:`option_table`,
    the docs and :func:`load_options` read those declarations.
    """

    cmake_build_type: str | None = option(
        "CMAKE_BUILD_TYPE", parse_build_type, "build type",
        "Build type; wins over DEBUG and REL_WITH_DEB_INFO. Unset: keep the type of an existing cache, else Release. "
        "In `[tool.buildkit]` also a list, `[\"Release\", \"Debug\"]`: every type is built (the first in the build "
        "folder, each other one in `<build folder>/build-types/<type>`) and installed into the same package tree or "
        "wheel, the later over the earlier. A type asked for by a variable or config setting (this one, DEBUG, "
        "REL_WITH_DEB_INFO) builds that type alone; the list's others are named as not built.",
        key="build-type")
    debug: bool = option("DEBUG", parse_bool, "boolean", "Build type Debug (unless CMAKE_BUILD_TYPE is set).",
                         default=False)
    rel_with_deb_info: bool = option("REL_WITH_DEB_INFO", parse_bool, "boolean",
                                     "Build type RelWithDebInfo (unless CMAKE_BUILD_TYPE or DEBUG is set).",
                                     default=False)
    max_jobs: int | None = option("MAX_JOBS", parse_positive_int, "positive integer",
                                  "Parallel compile jobs. Unset: chosen from cores and free memory.", key="max-jobs")
    parallel_level: int | None = option("CMAKE_BUILD_PARALLEL_LEVEL", parse_positive_int, "positive integer",
                                        "CMake's own job-count variable; used when MAX_JOBS is unset.")
    use_ninja: bool = option("USE_NINJA", parse_bool, "boolean",
                             "Build with Ninja (found on the system or installed from PyPI).", key="use-ninja",
                             default=True)
    generator: str | None = option("CMAKE_GENERATOR", parse_generator, "string",
                                   "CMake generator; overrides USE_NINJA.", key="generator")
    cmake_fresh: bool = option("CMAKE_FRESH", parse_bool, "boolean",
                               "Delete the CMake cache and configure from scratch.", default=False)
    cmake_only: bool = option("CMAKE_ONLY", parse_bool, "boolean", "Stop after configure.", default=False)
    library_only: bool = option(
        "{library_only_variable}", parse_bool, "boolean",
        "Build the library-only wheel (C++ libraries, headers, CMake config; no Python extension). In "
        "`[tool.buildkit]`, `library-only = true` makes the project a library: every wheel is library-only and "
        "its distribution is the `[project]` name.", key="library-only", default=False)
    python_only: bool = option(
        "{python_only_variable}", parse_bool, "boolean",
        "Build the python-only wheel (Python package and extension, pinned to the library wheel).", default=False)
    verbose: bool = option("VERBOSE", parse_bool, "boolean", "Stream the full build output.", key="verbose",
                           default=False, needs_cmake=False)
    editable_rebuild: bool = option(
        EDITABLE_REBUILD_VARIABLE, parse_bool, "boolean",
        "An editable install (`pip install -e .`, `buildkit develop`) rebuilds what changed when the package is "
        "imported (a plain wheel never does). At import, 0 turns that off for the session: the last build is "
        "imported as it is.", key="editable-rebuild", default=False)
    editable_verbose: bool = option(
        EDITABLE_VERBOSE_VARIABLE, parse_bool, "boolean",
        "A rebuild on import shows its progress (nothing is shown when nothing changed); 0 rebuilds silently "
        "(a failure still stops the import with the first error).", key="editable-verbose", default=True)
    cmake_args: tuple[str, ...] = option(
        "CMAKE_ARGS", parse_args, "arguments",
        "Extra CMake arguments, split like a shell command line (the conda-forge convention).", default=())
    cmake_prefix_path: str = option("CMAKE_PREFIX_PATH", parse_text, "path list",
                                    "Merged with the prefixes buildkit adds (site-packages, the library wheel).",
                                    default="")
    toolchain_file: str | None = option("CMAKE_TOOLCHAIN_FILE", parse_nonempty, "path",
                                        "Read by CMake itself at the first configure; a change forces a reconfigure.")
    compiler_launcher: str | None = option(
        "BUILDKIT_COMPILER_LAUNCHER", parse_nonempty, "program",
        "Compiler launcher (ccache, sccache) for C, C++ and CUDA. Unset: ccache or sccache when found on "
        "PATH; `none`: no launcher.", key="compiler-launcher")
    dist: Distribution = option(
        "BUILDKIT_DIST", parse_distribution, "one of `none` or `sccache`",
        "Distributed compiles: `sccache` compiles C, C++ and CUDA through sccache on the sccache-dist cluster "
        "that sccache's own client configuration names (`SCCACHE_CONF`, else `~/.config/sccache/config`: "
        "scheduler URL and credentials, which buildkit never shows or copies), with ninja's job count sized to the "
        "cluster's remote slots and links kept to a pool sized to this machine; when the cluster cannot take work "
        "the build compiles locally after one message saying why. `none`: every compile on this machine. "
        "docs/distributed.md has the details.", key="dist", default=Distribution.NONE)
    prioritized_text: bool | None = option(
        "USE_PRIORITIZED_TEXT_FOR_LD", parse_bool, "boolean",
        "Link with a linker script that puts the listed hot functions first in .text.")
    cc: str | None = option("CC", parse_nonempty, "program",
                            "C compiler for the first configure (CMake reads it then); a change reconfigures "
                            "from scratch.")
    cxx: str | None = option("CXX", parse_nonempty, "program",
                             "C++ compiler for the first configure; a change reconfigures from scratch.")
    cudacxx: str | None = option("CUDACXX", parse_nonempty, "program",
                                 "CUDA compiler (nvcc) for the first configure; a change reconfigures from scratch.")
    cflags: str = option("CFLAGS", parse_text, "flags",
                         "C compiler flags, read by CMake itself at the first configure (C++ files take "
                         "CXXFLAGS only).", default="")
    cxxflags: str | None = option("CXXFLAGS", parse_text, "flags",
                                  "C++ compiler flags, read by CMake itself at the first configure.")
    ldflags: str = option("LDFLAGS", parse_text, "flags", "Linker flags.", default="")
    osx_architectures: str | None = option("CMAKE_OSX_ARCHITECTURES", parse_nonempty, "string",
                                           "macOS target architecture (arm64 or x86_64): adds -arch and -isysroot.")
    osx_sysroot: str | None = option("CMAKE_OSX_SYSROOT", parse_nonempty, "path",
                                     "macOS SDK; default from `xcrun --show-sdk-path --sdk macosx`.")
    archflags: str | None = option("ARCHFLAGS", parse_text, "flags",
                                   "Set by cibuildwheel on macOS: target architectures.")
    host_platform: str | None = option("_PYTHON_HOST_PLATFORM", parse_nonempty, "string",
                                       "Set by cibuildwheel for cross builds: the wheel's platform.")
    macosx_deployment_target: str | None = option("MACOSX_DEPLOYMENT_TARGET", parse_nonempty, "version",
                                                  "Minimum macOS version: compile flag and wheel tag.")
    source_date_epoch: int | None = option("SOURCE_DATE_EPOCH", parse_epoch, "integer",
                                           "Timestamp for reproducible wheels and sdists.", needs_cmake=False)
    build_version: str | None = option(
        RELEASE_VERSION_VARIABLE, parse_nonempty, "version",
        "Release version to build instead of version.txt + git sha: the wheel carries it as given, with no "
        "`+git<sha>` label.", needs_cmake=False)
    build_number: int | None = option(RELEASE_NUMBER_VARIABLE, parse_positive_int, "positive integer",
                                      "Build number; N > 1 appends .postN to the release version.", needs_cmake=False)
    project_build_version: str | None = option(
        "{prefix}_BUILD_VERSION", parse_nonempty, "version",
        f"Older name of {RELEASE_VERSION_VARIABLE}; refused when it starts with `BUILD_`, `USE_` or `CMAKE_`, "
        "where it would read as a variable forwarded to CMake.", needs_cmake=False)
    project_build_number: int | None = option(
        "{prefix}_BUILD_NUMBER", parse_positive_int, "positive integer",
        f"Older name of {RELEASE_NUMBER_VARIABLE}, with the same rule.", needs_cmake=False)
    extra_requirements: tuple[str, ...] = option("{prefix}_EXTRA_INSTALL_REQUIREMENTS", parse_requirements,
                                                 "requirements", "Extra install requirements, separated by `|`.",
                                                 default=(), needs_cmake=False)
    cuda_arch_list: str | None = option(
        "{prefix}_CUDA_ARCH_LIST", parse_nonempty, "architecture list",
        "CUDA architectures, PyTorch form (`7.5;8.0;9.0+PTX`) or CMake form (`75-real;90`).", key="cuda-arch-list")
    torch_cuda_arch_list: str | None = option(
        "TORCH_CUDA_ARCH_LIST", parse_nonempty, "architecture list",
        "PyTorch's variable, with PyTorch's meaning: `8.0` is sm_80 alone, PTX only where `+PTX` (or a family "
        "name such as `Ampere`) asks for it. Used when `<PREFIX>_CUDA_ARCH_LIST` is not set as a variable or "
        "config setting; it wins over `cuda-arch-list` in `[tool.buildkit]`.")
    develop_cuda_arch_list: str = option(
        "BUILDKIT_DEVELOP_CUDA_ARCH_LIST", parse_nonempty, "architecture list",
        "What a develop build compiles of `cuda-arch-list` (the wheel's list): `one` architecture, this machine's "
        "GPU's or else the newest of the list; `wheel`, the whole list; or a list of its own. A list in "
        "`TORCH_CUDA_ARCH_LIST` or `<PREFIX>_CUDA_ARCH_LIST` is built whole in every build.",
        key="develop-cuda-arch-list", default="one")
    cuda_toolkit: CudaToolkit = option(
        "BUILDKIT_CUDA_TOOLKIT", parse_cuda_toolkit, "one of `wheel`, `system` or `auto`",
        "Where nvcc, the CUDA headers and libraries come from at build time: `wheel`, NVIDIA's toolchain wheels "
        "in the build environment (`nvidia-cuda-nvcc`..., installed in `site-packages/nvidia/cu<N>`; an isolated "
        "build gets them as build requirements), mirrored into the build folder and given to CMake as "
        "`CMAKE_CUDA_COMPILER` and `CUDAToolkit_ROOT`; `system`, the machine's toolkit as CMake finds it "
        "(`CUDACXX`, nvcc on PATH, `/usr/local/cuda`; `CUDA_HOME` in a buildkit.torch project); `auto`, the "
        "system's when there is one of the CUDA major version asked for (torch's, for a torch extension) and the "
        "wheels' otherwise. docs/cuda.md has the rules.", key="cuda-toolkit", default=CudaToolkit.AUTO)
    torch_precompiled_headers: bool = option(
        "BUILDKIT_TORCH_PCH", parse_bool, "boolean",
        "Precompiled torch headers for the C++ sources of torch extensions (`buildkit_torch_extension`): "
        "`torch/extension.h` is compiled once (targets of the same headers share it), not once per source, and "
        "rebuilt when a flag or torch changes; a wheel build compiles it only where more than two sources per "
        "job share it. A target's C++ sources then skip sccache, which cannot cache them; "
        "ccache gets the sloppiness they need. CUDA sources never use one. Passed to CMake as `-DBUILDKIT_TORCH_PCH`.",
        key="torch-precompiled-headers", default=True)
    # buildkit.torch projects (a setup.py with cpp_extension's API): its variables, with its meaning.
    cuda_home: str | None = option(
        "CUDA_HOME", parse_nonempty, "path",
        "buildkit.torch projects: the CUDA toolkit whose `bin/nvcc` compiles `.cu` sources when CUDACXX is unset "
        "(torch.utils.cpp_extension's meaning, and `buildkit.torch.CUDA_HOME`).")
    cuda_path: str | None = option("CUDA_PATH", parse_nonempty, "path",
                                   "buildkit.torch projects: CUDA_HOME's other name, used when CUDA_HOME is unset.")
    torch_dont_check_compiler_abi: bool = option(
        "TORCH_DONT_CHECK_COMPILER_ABI", parse_bool, "boolean",
        "buildkit.torch projects: skip cpp_extension's check that the C++ compiler is one torch's ABI works with "
        "(GCC or Clang, GCC 5 or newer) and, for CUDA, that the host compiler is one nvcc supports.",
        default=False)
    # The fields below are not read from a variable of their own.
    # The build type when nothing asks for one and no cache has one: [tool.buildkit] build-type
    # (the first of its list).
    default_build_type: str = "Release"
    # The other build types of a [tool.buildkit] build-type list, built after the first one
    # into the same prefix; empty when a variable or config setting asks for one type.
    extra_build_types: tuple[str, ...] = ()
    # The list's types that such a request left out (for the message that names them).
    dropped_build_types: tuple[str, ...] = ()
    # -D NAME=VALUE pairs forwarded to CMake, sorted by name.
    cmake_defines: tuple[tuple[str, str], ...] = ()
    # CMake's own environment variables seen at load time (they feed the fingerprint).
    cmake_environment: tuple[tuple[str, str], ...] = ()
    # The variable the release version came from, for messages.
    release_variable: str = RELEASE_VERSION_VARIABLE
    # Where each value came from: "config setting", "environment", "[tool.buildkit]", "default".
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    variable_names: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def wheel_mode(self) -> WheelMode:
        if self.library_only:
            return WheelMode.LIBRARY_ONLY
        if self.python_only:
            return WheelMode.PYTHON_ONLY
        return WheelMode.FULL

    @property
    def jobs(self) -> int | None:
        return self.max_jobs or self.parallel_level

    @property
    def cmake_generator(self) -> str | None:
        """The generator to request; None lets CMake pick its platform default."""
        if self.generator:
            return self.generator
        return "Ninja" if self.use_ninja else None

    def explicit_build_type(self) -> str | None:
        """The build type asked for by CMAKE_BUILD_TYPE, DEBUG or REL_WITH_DEB_INFO."""
        request = self.build_type_request()
        return request[0] if request else None

    def build_type_request(self) -> tuple[str, str] | None:
        """The build type a variable or config setting asks for, and what asked, in words."""
        if self.cmake_build_type and self.sources.get("cmake_build_type") != "[tool.buildkit]":
            source = self.sources.get("cmake_build_type", "default")
            name = self.variable_names.get("cmake_build_type") or "CMAKE_BUILD_TYPE"
            return self.cmake_build_type, f"{name}={self.cmake_build_type} ({source})"
        if self.debug:
            return "Debug", f"DEBUG=1 ({self.sources.get('debug', 'default')})"
        if self.rel_with_deb_info:
            return "RelWithDebInfo", f"REL_WITH_DEB_INFO=1 ({self.sources.get('rel_with_deb_info', 'default')})"
        return None

    def dropped_build_types_note(self) -> str | None:
        """What a build says when a request for one build type left out those of the list."""
        request = self.build_type_request()
        if not self.dropped_build_types or request is None:
            return None
        listed = ", ".join([self.default_build_type, *self.dropped_build_types])
        left_out = [t for t in (self.default_build_type, *self.dropped_build_types) if t != request[0]]
        return (f"[tool.buildkit] build-type lists {listed}, but {request[1]} asks for one build type: building "
                f"{request[0]} only, not {', '.join(left_out)}. Unset it to build every type of the list.")

    def resolve_build_type(self, cached: str | None = None) -> str:
        """Explicit request first, then the existing cache's type, then the project default.
        A build-type list pins the primary build to its first type, whatever the cache says."""
        explicit = self.explicit_build_type()
        if explicit:
            return explicit
        if self.extra_build_types:
            return self.default_build_type
        if cached:
            try:
                return parse_build_type(cached, "CMAKE_BUILD_TYPE in CMakeCache.txt")
            except ConfigError:
                return cached
        return self.default_build_type

    def defines(self) -> dict[str, str]:
        return dict(self.cmake_defines)

    def configure_definitions(self) -> dict[str, str]:
        """Every variable the configure's command line sets: the forwarded ``-D`` values, then
        CMAKE_ARGS's (which come after them, so they win, as in CMake)."""
        return {**self.defines(), **argument_definitions(self.cmake_args)}

    def definition_origins(self) -> dict[str, str]:
        """Where each of configure_definitions() comes from, in words for a message."""
        origins = {name: _DEFINE_ORIGINS.get(self.sources.get(f"-D{name}", "environment"), "the environment")
                   for name, _ in self.cmake_defines}
        arguments_from = _ARGUMENT_ORIGINS.get(self.sources.get("cmake_args", "environment"), "CMAKE_ARGS")
        return {**origins, **dict.fromkeys(argument_definitions(self.cmake_args), arguments_from)}

    def cuda_architecture_request(self) -> ArchitectureRequest | None:
        """The CUDA architecture list asked for, and the variable that asked: the project's
        own variable, then TORCH_CUDA_ARCH_LIST (a variable outranks a [tool.buildkit]
        default, as everywhere), then ``cuda-arch-list``; None when nothing asks."""
        own_is_a_variable = self.sources.get("cuda_arch_list") in ("config setting", "environment")
        own = ArchitectureRequest(self.cuda_arch_list or "", self.variable_names.get("cuda_arch_list")
                                  or "CUDA_ARCH_LIST", pytorch_exact=False, from_variable=own_is_a_variable)
        torch = ArchitectureRequest(self.torch_cuda_arch_list or "", "TORCH_CUDA_ARCH_LIST", pytorch_exact=True)
        for request in ((own, torch) if own_is_a_variable else (torch, own)):
            if request.value:
                return request
        return None

    def __rich__(self) -> Table:
        rows = [(name, self.variable_names.get(name, ""), _show(value), self.sources.get(name, "default"))
                for name, value in self._rows()]
        rows += [("cmake -D", name, value, self.sources.get(f"-D{name}", "environment"))
                 for name, value in self.cmake_defines]
        return console.table("buildkit build options", ("option", "variable", "value", "from"), rows)

    def _rows(self) -> Iterator[tuple[str, Any]]:
        skip = {"cmake_defines", "cmake_environment", "sources", "variable_names", "release_variable"}
        for name in self.__dataclass_fields__:
            if name not in skip:
                yield name, getattr(self, name)


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(value) if value else "-"
    return "-" if value is None else str(value)


# ------------------------------------------------------------ resolution

def load_options(settings: ProjectSettings | None = None, environ: Mapping[str, str] | None = None,
                 config_settings: Mapping[str, Any] | None = None) -> BuildOptions:
    """Resolve every option from the layers, validate, and check the wheel modes."""
    environ = os.environ if environ is None else environ
    config = {k: _config_value(k, v) for k, v in (config_settings or {}).items()}
    table = option_table(settings)
    by_key = {o.key: o for o in table if o.key}
    # Every [tool.buildkit] option value is checked, also one the environment overrides.
    toml_defaults = {key: _toml_default(by_key[key], raw, settings.root / "pyproject.toml")
                     for key, raw in settings.option_defaults.items() if key in by_key} if settings else {}
    # build-type = ["Release", "Debug"]: the first is the default, the others are built after it.
    listed = toml_defaults.get("build-type")
    extra_build_types: tuple[str, ...] = ()
    if isinstance(listed, tuple):
        toml_defaults["build-type"], *others = listed
        extra_build_types = tuple(others)
    values: dict[str, Any] = {}
    sources: dict[str, str] = dict.fromkeys(("default_build_type", "extra_build_types", "dropped_build_types"),
                                            "[tool.buildkit]") if extra_build_types else {}
    for option in table:
        values[option.field], sources[option.field] = _resolve(option, config, environ, toml_defaults)
    for key in list(config):
        # Config settings may use the [tool.buildkit] key instead of the variable name.
        if key in by_key and by_key[key].env not in config:
            opt = by_key[key]
            values[opt.field] = opt.parse(config.pop(key), f"config setting {key}")
            sources[opt.field] = "config setting"
    if values["library_only"] and values["python_only"]:
        lib, py = (o.env for o in table if o.field in ("library_only", "python_only"))
        raise ModeConflictError(
            f"{lib} and {py} are both on, but a wheel is either library-only or python-only.",
            f"Set one of them to 0: {lib}=1 builds the C++ library wheel, {py}=1 the Python wheel "
            "that depends on it; leave both unset for one full wheel.")
    release_variable = merge_project_named(values, sources, {o.field: o.env for o in table})
    if settings is None or settings.cmake:  # CMAKE_ARGS reach no CMake install otherwise
        refuse_reserved_arguments(values["cmake_args"], sources["cmake_args"])
    read_by_options = {*by_key, *(o.env for o in table if o.env)}
    refuse_unused_config_settings(config, settings, buildkit_switches(table), read_by_options)
    defines, define_sources = forwarded_defines(settings, buildkit_switches(table), config, environ)
    for name, value in defines.items():
        check_text(value, f"-D{name} (from {define_sources.get(f'-D{name}', 'the environment')})")
    sources.update(define_sources)
    options = BuildOptions(
        **values,
        release_variable=release_variable,
        default_build_type=toml_defaults.get("build-type") or BuildOptions.default_build_type,
        cmake_defines=tuple(sorted(defines.items())),
        cmake_environment=tuple(sorted((k, environ[k]) for k in CMAKE_ENVIRONMENT_VARIABLES if k in environ)),
        sources=sources,
        variable_names={o.field: o.env or "" for o in table},
        extra_build_types=extra_build_types,
    )
    if extra_build_types and options.explicit_build_type():  # one type asked for: the list's others are dropped
        options = replace(options, extra_build_types=(), dropped_build_types=extra_build_types)
    return options


def _config_value(key: str, value: Any) -> str:
    # pip passes repeated -C keys as a list; the last one wins, as on a command line.
    if isinstance(value, list):
        value = value[-1] if value else ""
    if not isinstance(value, str):
        raise ConfigError(f"Config setting {key} must be a string, not {value!r}.",
                          f"Pass it as -C {key}=VALUE.")
    return value


def _resolve(option: Option, config: Mapping[str, str], environ: Mapping[str, str],
             toml_defaults: Mapping[str, Any]) -> tuple[Any, str]:
    if option.env and option.env in config:
        where = f"config setting {option.env}"
        return option.parse(check_text(config[option.env], where, one_line=False), where), "config setting"
    if option.env and option.env in environ:
        return option.parse(check_text(environ[option.env], option.env, one_line=False), option.env), "environment"
    if option.key and option.key in toml_defaults:
        return toml_defaults[option.key], "[tool.buildkit]"
    return option.default, "default"


def _toml_default(option: Option, raw: Any, pyproject: Path) -> Any:
    """A build option's [tool.buildkit] value: of the field's own type (``max-jobs = 4``,
    ``use-ninja = false``) or a string, then checked by the option's parser."""
    where = f"[tool.buildkit] {option.key}"
    wrong = f"{where} must be {with_article(option.kind)}, not {raw!r}."
    found = f" It is read from {pyproject}; docs/configuration.md lists every key."
    native = _toml_types(option.field)
    if isinstance(raw, list) and option.parse is parse_build_type:  # build-type = ["Release", "Debug"]
        return parse_build_type_list(raw, where)
    if not isinstance(raw, (str, *native)) or (isinstance(raw, bool) and bool not in native):
        raise ConfigError(wrong, option.doc + found)
    if isinstance(raw, str):
        check_text(raw, where)
    try:
        return option.parse(raw if isinstance(raw, str) else define_value(raw), where)
    except ConfigError as error:
        raise ConfigError(wrong, (error.hint or option.doc) + found) from None


@cache
def _toml_types(field_name: str) -> tuple[type, ...]:
    """The TOML value types a build option's key takes besides a string: its field's type."""
    hint = typing.get_type_hints(BuildOptions)[field_name]
    return tuple(t for t in (bool, int) if t in typing.get_args(hint) or hint is t)


def merged_prefix_path(options: BuildOptions, added: Sequence[str | Path]) -> str:
    """CMAKE_PREFIX_PATH: buildkit's prefixes first, then the user's, without repeats."""
    seen: list[str] = []
    for entry in [*map(str, added), *options.cmake_prefix_path.replace(os.pathsep, ";").split(";")]:
        if entry and entry not in seen:
            seen.append(entry)
    return ";".join(seen)

