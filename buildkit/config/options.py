"""Build options: PEP 517 config settings, the environment and ``[tool.buildkit]``.

This is the only module that reads ``os.environ`` (callers pass a mapping in, so
tests never touch the real environment).  Every variable buildkit interprets is a
row of the table returned by :func:`option_table`; the docs and the bad-value tests
are generated from the same rows.  Precedence, highest first: config settings
(``pip -C`` / ``python -m build -C``), the environment, ``[tool.buildkit]``, the
defaults below.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from buildkit._util import console
from buildkit.config.modes import WheelMode
from buildkit.config.parsing import (  # noqa: F401 - re-exported: the parsers belong to the options' API
    BUILD_TYPES,
    FALSE_WORDS,
    TRUE_WORDS,
    parse_args,
    parse_bool,
    parse_build_type,
    parse_epoch,
    parse_generator,
    parse_nonempty,
    parse_positive_int,
    parse_requirements,
    parse_text,
)
from buildkit.config.settings import ProjectSettings
from buildkit.errors import ConfigError, ModeConflictError

FORWARDED_PREFIXES = ("BUILD_", "USE_", "CMAKE_")

# Variables CMake reads from the environment itself: forwarding them as -D would
# change their meaning, so they stay in the environment (and in the configure
# fingerprint) or are interpreted by buildkit where noted in the option table.
CMAKE_ENVIRONMENT_VARIABLES = frozenset({
    "CMAKE_APPBUNDLE_PATH", "CMAKE_BUILD_PARALLEL_LEVEL", "CMAKE_COLOR_DIAGNOSTICS",
    "CMAKE_CONFIG_TYPE", "CMAKE_CONFIGURATION_TYPES", "CMAKE_CROSSCOMPILING_EMULATOR",
    "CMAKE_EXPORT_BUILD_DATABASE", "CMAKE_EXPORT_COMPILE_COMMANDS", "CMAKE_FRAMEWORK_PATH",
    "CMAKE_GENERATOR", "CMAKE_GENERATOR_INSTANCE", "CMAKE_GENERATOR_PLATFORM",
    "CMAKE_GENERATOR_TOOLSET", "CMAKE_INCLUDE_PATH", "CMAKE_INSTALL_MODE",
    "CMAKE_INSTALL_PARALLEL_LEVEL", "CMAKE_LIBRARY_PATH", "CMAKE_MAXIMUM_RECURSION_DEPTH",
    "CMAKE_NO_VERBOSE", "CMAKE_OSX_ARCHITECTURES", "CMAKE_POLICY_VERSION_MINIMUM",
    "CMAKE_PROGRAM_PATH", "CMAKE_TEST_LAUNCHER", "CMAKE_TOOLCHAIN_FILE",
})
# Set by buildkit itself; a user value would point the install somewhere else.
RESERVED_VARIABLES = frozenset({"CMAKE_INSTALL_PREFIX"})
# Interpreted by buildkit and passed to CMake in their interpreted form.
HANDLED_VARIABLES = frozenset({"CMAKE_ARGS", "CMAKE_BUILD_TYPE", "CMAKE_PREFIX_PATH"})


# ----------------------------------------------------------------- the table

@dataclass(frozen=True)
class Option:
    """One knob: where it is read from, how it is parsed, what it does."""

    field: str  # attribute of BuildOptions
    env: str | None  # environment variable / config-setting name
    key: str | None  # [tool.buildkit] key, if the project may set a default
    parse: Callable[[str, str], Any]
    default: Any
    kind: str
    doc: str


def option_table(settings: ProjectSettings | None = None) -> tuple[Option, ...]:
    """Every option, with the project-named variables filled in from ``settings``."""
    prefix = settings.env_prefix if settings else "<PREFIX>"
    lib_var = settings["library-only-variable"] if settings else "BUILD_LIBTORCH_WHL"
    py_var = settings["python-only-variable"] if settings else "BUILD_PYTHON_ONLY"
    O = Option
    return (
        O("cmake_build_type", "CMAKE_BUILD_TYPE", "build-type", parse_build_type, None, "build type",
          "Build type; wins over DEBUG and REL_WITH_DEB_INFO. Unset: keep the type of an existing cache, else Release."),
        O("debug", "DEBUG", None, parse_bool, False, "boolean", "Build type Debug (unless CMAKE_BUILD_TYPE is set)."),
        O("rel_with_deb_info", "REL_WITH_DEB_INFO", None, parse_bool, False, "boolean",
          "Build type RelWithDebInfo (unless CMAKE_BUILD_TYPE or DEBUG is set)."),
        O("max_jobs", "MAX_JOBS", "max-jobs", parse_positive_int, None, "positive integer",
          "Parallel compile jobs. Unset: chosen from cores and free memory."),
        O("parallel_level", "CMAKE_BUILD_PARALLEL_LEVEL", None, parse_positive_int, None, "positive integer",
          "CMake's own job-count variable; used when MAX_JOBS is unset."),
        O("use_ninja", "USE_NINJA", "use-ninja", parse_bool, True, "boolean",
          "Build with Ninja (found on the system or installed from PyPI)."),
        O("generator", "CMAKE_GENERATOR", "generator", parse_generator, None, "string",
          "CMake generator; overrides USE_NINJA."),
        O("cmake_fresh", "CMAKE_FRESH", None, parse_bool, False, "boolean",
          "Delete the CMake cache and configure from scratch."),
        O("cmake_only", "CMAKE_ONLY", None, parse_bool, False, "boolean", "Stop after configure."),
        O("library_only", lib_var, None, parse_bool, False, "boolean",
          "Build the library-only wheel (C++ libraries, headers, CMake config; no Python extension)."),
        O("python_only", py_var, None, parse_bool, False, "boolean",
          "Build the python-only wheel (Python package and extension, pinned to the library wheel)."),
        O("verbose", "VERBOSE", "verbose", parse_bool, False, "boolean", "Stream the full build output."),
        O("cmake_args", "CMAKE_ARGS", None, parse_args, (), "arguments",
          "Extra CMake arguments, split like a shell command line (the conda-forge convention)."),
        O("cmake_prefix_path", "CMAKE_PREFIX_PATH", None, parse_text, "", "path list",
          "Merged with the prefixes buildkit adds (site-packages, the library wheel)."),
        O("toolchain_file", "CMAKE_TOOLCHAIN_FILE", None, parse_nonempty, None, "path",
          "Read by CMake itself at the first configure; a change forces a reconfigure."),
        O("compiler_launcher", "BUILDKIT_COMPILER_LAUNCHER", "compiler-launcher", parse_nonempty, None, "program",
          "Compiler launcher (ccache, sccache) for C, C++ and CUDA. Unset: ccache or sccache when found on "
          "PATH; `none`: no launcher."),
        O("prioritized_text", "USE_PRIORITIZED_TEXT_FOR_LD", None, parse_bool, None, "boolean",
          "Link with a linker script that puts the listed hot functions first in .text."),
        O("cc", "CC", None, parse_nonempty, None, "program",
          "C compiler for the first configure (CMake reads it then); a change reconfigures from scratch."),
        O("cxx", "CXX", None, parse_nonempty, None, "program",
          "C++ compiler for the first configure; a change reconfigures from scratch."),
        O("cudacxx", "CUDACXX", None, parse_nonempty, None, "program",
          "CUDA compiler (nvcc) for the first configure; a change reconfigures from scratch."),
        O("cflags", "CFLAGS", None, parse_text, "", "flags", "C compiler flags; copied to CXXFLAGS when that is unset."),
        O("cxxflags", "CXXFLAGS", None, parse_text, None, "flags", "C++ compiler flags."),
        O("ldflags", "LDFLAGS", None, parse_text, "", "flags", "Linker flags."),
        O("osx_architectures", "CMAKE_OSX_ARCHITECTURES", None, parse_nonempty, None, "string",
          "macOS target architecture (arm64 or x86_64): adds -arch and -isysroot."),
        O("osx_sysroot", "CMAKE_OSX_SYSROOT", None, parse_nonempty, None, "path",
          "macOS SDK; default from `xcrun --show-sdk-path --sdk macosx`."),
        O("archflags", "ARCHFLAGS", None, parse_text, None, "flags", "Set by cibuildwheel on macOS: target architectures."),
        O("host_platform", "_PYTHON_HOST_PLATFORM", None, parse_nonempty, None, "string",
          "Set by cibuildwheel for cross builds: the wheel's platform."),
        O("macosx_deployment_target", "MACOSX_DEPLOYMENT_TARGET", None, parse_nonempty, None, "version",
          "Minimum macOS version: compile flag and wheel tag."),
        O("source_date_epoch", "SOURCE_DATE_EPOCH", None, parse_epoch, None, "integer",
          "Timestamp for reproducible wheels and sdists."),
        O("build_version", f"{prefix}_BUILD_VERSION", None, parse_nonempty, None, "version",
          "Version to build instead of version.txt + git sha."),
        O("build_number", f"{prefix}_BUILD_NUMBER", None, parse_positive_int, None, "positive integer",
          "Build number; N > 1 appends .postN to the version."),
        O("extra_requirements", f"{prefix}_EXTRA_INSTALL_REQUIREMENTS", None, parse_requirements, (), "requirements",
          "Extra install requirements, separated by `|`."),
        O("cuda_arch_list", f"{prefix}_CUDA_ARCH_LIST", "cuda-arch-list", parse_nonempty, None, "architectures",
          "CUDA architectures, PyTorch form (`7.5;8.0;9.0+PTX`) or CMake form (`75-real;90`)."),
    )


def buildkit_switches(table: Sequence[Option]) -> frozenset[str]:
    """Variables that steer buildkit itself and are never forwarded to CMake."""
    return frozenset(o.env for o in table if o.env) - HANDLED_VARIABLES - {"CMAKE_OSX_SYSROOT"}


def option_keys() -> frozenset[str]:
    return frozenset(o.key for o in option_table() if o.key)


# ------------------------------------------------------------ the result

@dataclass(frozen=True)
class BuildOptions:
    """Everything the rest of buildkit needs from the environment, validated once."""

    cmake_build_type: str | None = None
    debug: bool = False
    rel_with_deb_info: bool = False
    default_build_type: str = "Release"
    max_jobs: int | None = None
    parallel_level: int | None = None
    use_ninja: bool = True
    generator: str | None = None
    cmake_fresh: bool = False
    cmake_only: bool = False
    library_only: bool = False
    python_only: bool = False
    verbose: bool = False
    cmake_args: tuple[str, ...] = ()
    cmake_prefix_path: str = ""
    toolchain_file: str | None = None
    compiler_launcher: str | None = None
    prioritized_text: bool | None = None
    cc: str | None = None
    cxx: str | None = None
    cudacxx: str | None = None
    cflags: str = ""
    cxxflags: str | None = None
    ldflags: str = ""
    osx_architectures: str | None = None
    osx_sysroot: str | None = None
    archflags: str | None = None
    host_platform: str | None = None
    macosx_deployment_target: str | None = None
    source_date_epoch: int | None = None
    build_version: str | None = None
    build_number: int | None = None
    extra_requirements: tuple[str, ...] = ()
    cuda_arch_list: str | None = None
    # -D NAME=VALUE pairs forwarded to CMake, sorted by name.
    cmake_defines: tuple[tuple[str, str], ...] = ()
    # CMake's own environment variables seen at load time (they feed the fingerprint).
    cmake_environment: tuple[tuple[str, str], ...] = ()
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
    def effective_cxxflags(self) -> str:
        return self.cflags if self.cxxflags is None else self.cxxflags

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
        if self.cmake_build_type and self.sources.get("cmake_build_type") != "[tool.buildkit]":
            return self.cmake_build_type
        if self.debug:
            return "Debug"
        if self.rel_with_deb_info:
            return "RelWithDebInfo"
        return None

    def resolve_build_type(self, cached: str | None = None) -> str:
        """Explicit request first, then the existing cache's type, then the project default."""
        explicit = self.explicit_build_type()
        if explicit:
            return explicit
        if cached:
            try:
                return parse_build_type(cached, "CMAKE_BUILD_TYPE in CMakeCache.txt")
            except ConfigError:
                return cached
        return self.default_build_type

    def defines(self) -> dict[str, str]:
        return dict(self.cmake_defines)

    def __rich__(self):
        rows = [(name, self.variable_names.get(name, ""), _show(value), self.sources.get(name, "default"))
                for name, value in self._rows()]
        rows += [("cmake -D", name, value, self.sources.get(f"-D{name}", "environment"))
                 for name, value in self.cmake_defines]
        return console.table("buildkit build options", ("option", "variable", "value", "from"), rows)

    def _rows(self):
        skip = {"cmake_defines", "cmake_environment", "sources", "variable_names"}
        for name in self.__dataclass_fields__:
            if name not in skip:
                yield name, getattr(self, name)


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(value) if value else "-"
    return "-" if value is None else str(value)


# ------------------------------------------------------------ resolution

def _is_forwarded(name: str, extra: frozenset[str], switches: frozenset[str]) -> bool:
    if name in switches or name in CMAKE_ENVIRONMENT_VARIABLES or name in HANDLED_VARIABLES:
        return False
    if name in extra:
        return True
    # Cross-compiling try_run() answers (e.g. HAVE_FOO_EXITCODE) have to reach CMake too.
    return name.startswith(FORWARDED_PREFIXES) or name.endswith("_EXITCODE")


def _define_value(value: Any) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


def load_options(settings: ProjectSettings | None = None, environ: Mapping[str, str] | None = None,
                 config_settings: Mapping[str, Any] | None = None) -> BuildOptions:
    """Resolve every option from the layers, validate, and check the wheel modes."""
    environ = os.environ if environ is None else environ
    config = {k: _config_value(k, v) for k, v in (config_settings or {}).items()}
    table = option_table(settings)
    toml_defaults = dict(settings.option_defaults) if settings else {}
    by_key = {o.key: o for o in table if o.key}
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for option in table:
        values[option.field], sources[option.field] = _resolve(option, config, environ, toml_defaults)
    for key in list(config):
        # Config settings may use the [tool.buildkit] key instead of the variable name.
        if key in by_key and by_key[key].env not in config:
            opt = by_key[key]
            values[opt.field], sources[opt.field] = opt.parse(config.pop(key), f"config setting {key}"), "config setting"
    if values["library_only"] and values["python_only"]:
        lib, py = (o.env for o in table if o.field in ("library_only", "python_only"))
        raise ModeConflictError(
            f"{lib} and {py} are both on, but a wheel is either library-only or python-only.",
            f"Set one of them to 0: {lib}=1 builds the C++ library wheel, {py}=1 the Python wheel "
            "that depends on it; leave both unset for one full wheel.")
    defines, define_sources = _forwarded_defines(settings, table, config, environ)
    sources.update(define_sources)
    default_type = toml_defaults.get("build-type")
    if values.get("cmake_build_type") and sources["cmake_build_type"] == "[tool.buildkit]":
        default_type = values["cmake_build_type"]
    return BuildOptions(
        **values,
        default_build_type=default_type and parse_build_type(str(default_type), "[tool.buildkit] build-type") or "Release",
        cmake_defines=tuple(sorted(defines.items())),
        cmake_environment=tuple(sorted((k, environ[k]) for k in CMAKE_ENVIRONMENT_VARIABLES if k in environ)),
        sources=sources,
        variable_names={o.field: o.env or "" for o in table},
    )


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
        return option.parse(config[option.env], f"config setting {option.env}"), "config setting"
    if option.env and option.env in environ:
        return option.parse(environ[option.env], option.env), "environment"
    if option.key and option.key in toml_defaults:
        raw = toml_defaults[option.key]
        text = _define_value(raw) if isinstance(raw, (bool, int)) else raw
        if not isinstance(text, str):
            raise ConfigError(f"[tool.buildkit] key `{option.key}` must be a {option.kind}, not {raw!r}.",
                              option.doc)
        return option.parse(text, f"[tool.buildkit] {option.key}"), "[tool.buildkit]"
    return option.default, "default"


def _forwarded_defines(settings: ProjectSettings | None, table: Sequence[Option], config: Mapping[str, str],
                       environ: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    aliases: Mapping[str, str] = settings["cmake-aliases"] if settings else {}
    extra = frozenset(settings["cmake-forward"] if settings else ())
    switches = buildkit_switches(table)
    for layer_name, layer in (("config setting", config), ("environment", environ)):
        for reserved in RESERVED_VARIABLES & set(layer):
            raise ConfigError(
                f"{reserved} is set in the {layer_name}, but buildkit sets it: CMake installs into the package tree.",
                f"Unset {reserved}. To install somewhere else, build a wheel and install that.")
    defines: dict[str, str] = {}
    sources: dict[str, str] = {}
    toml_defines = settings["cmake-defines"] if settings else {}
    for name, value in toml_defines.items():
        defines[name], sources[f"-D{name}"] = _define_value(value), "[tool.buildkit]"
    for layer_name, layer in (("environment", environ), ("config setting", config)):
        for name, value in layer.items():
            target = aliases.get(name)
            if target and target not in layer:
                defines[target], sources[f"-D{target}"] = value, layer_name
            elif _is_forwarded(name, extra, switches):
                defines[name], sources[f"-D{name}"] = value, layer_name
    return defines, sources


def merged_prefix_path(options: BuildOptions, added: Sequence[str | Path]) -> str:
    """CMAKE_PREFIX_PATH: buildkit's prefixes first, then the user's, without repeats."""
    seen: list[str] = []
    for entry in [*map(str, added), *options.cmake_prefix_path.replace(os.pathsep, ";").split(";")]:
        if entry and entry not in seen:
            seen.append(entry)
    return ";".join(seen)


# PEP 517 hooks run setup.py in the backend's own process; the config settings of
# the current hook call are parked here for load_options to pick up.
_CONFIG_SETTINGS: list[Mapping[str, Any]] = []


def current_config_settings() -> Mapping[str, Any] | None:
    return _CONFIG_SETTINGS[-1] if _CONFIG_SETTINGS else None


class config_settings_scope:
    """``with config_settings_scope(cs): ...`` makes ``cs`` the top-precedence layer."""

    def __init__(self, config_settings: Mapping[str, Any] | None):
        self.config_settings = dict(config_settings or {})

    def __enter__(self) -> None:
        _CONFIG_SETTINGS.append(self.config_settings)

    def __exit__(self, *exc: object) -> None:
        _CONFIG_SETTINGS.pop()
