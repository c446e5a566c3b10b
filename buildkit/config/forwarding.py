"""Which variables reach CMake as ``-DNAME=VALUE``, and which never do.

Every variable whose name starts with ``BUILD_``, ``USE_`` or ``CMAKE_`` (or ends
with ``_EXITCODE``) is forwarded verbatim, with the project's ``cmake-forward``
names and ``cmake-aliases``; buildkit's own switches, the variables CMake reads
from the environment itself and the ones buildkit interprets are not.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from buildkit.config.settings import ProjectSettings
from buildkit.errors import ConfigError

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


def _is_forwarded(name: str, extra: frozenset[str], switches: frozenset[str]) -> bool:
    if name in switches or name in CMAKE_ENVIRONMENT_VARIABLES or name in HANDLED_VARIABLES:
        return False
    if name in extra:
        return True
    # Cross-compiling try_run() answers (e.g. HAVE_FOO_EXITCODE) have to reach CMake too.
    return name.startswith(FORWARDED_PREFIXES) or name.endswith("_EXITCODE")


def define_value(value: Any) -> str:
    """A TOML value as CMake reads it: booleans as ON/OFF, a list as a CMake list (items
    joined by ';', a ';' inside an item escaped, as scikit-build-core does)."""
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if isinstance(value, (list, tuple)):
        return ";".join(str(item).replace(";", "\\;") for item in value)
    return str(value)


def forwarded_defines(settings: ProjectSettings | None, switches: frozenset[str], config: Mapping[str, str],
                      environ: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The -D values for CMake and where each came from: [tool.buildkit] cmake-defines, then the
    environment, then the config settings; ``switches`` are buildkit's own variables, never forwarded."""
    aliases: Mapping[str, str] = settings.cmake_aliases if settings else {}
    extra = frozenset(settings.cmake_forward if settings else ())
    cmake_installs = settings is None or settings.cmake  # the refusals below guard an install (none: cmake = false)
    # CMake puts every installed file under DESTDIR, and its manifest does not say so.
    if environ.get("DESTDIR") and cmake_installs:
        _refuse_reserved(f"DESTDIR={environ['DESTDIR']}", "the environment")
    defines: dict[str, str] = {}
    sources: dict[str, str] = {}
    toml_defines = settings.cmake_defines if settings else {}
    for name, value in toml_defines.items():
        defines[name], sources[f"-D{name}"] = define_value(value), "[tool.buildkit]"
    for layer_name, layer in (("environment", environ), ("config setting", config)):
        for name, value in layer.items():
            target = aliases.get(name)
            if target and target not in layer:
                defines[target], sources[f"-D{target}"] = value, layer_name
            elif _is_forwarded(name, extra, switches):
                defines[name], sources[f"-D{name}"] = value, layer_name
    for name in defines if cmake_installs else ():
        if name.split(":", 1)[0] in RESERVED_VARIABLES:  # CMake's NAME:TYPE spelling sets the same variable
            layer_name = sources[f"-D{name}"]
            _refuse_reserved(name, "[tool.buildkit] cmake-defines" if layer_name == "[tool.buildkit]" else
                             f"the {layer_name}s" if layer_name == "config setting" else f"the {layer_name}")
    return defines, sources


def refuse_unused_config_settings(config: Mapping[str, str], settings: ProjectSettings | None,
                                  switches: frozenset[str], option_names: Collection[str]) -> None:
    """Refuse a config setting that nothing reads: not an option's variable or key, and not a
    variable forwarded to CMake.  Passed as it is, it would change nothing, without a word
    (scikit-build-core's ``-C cmake.define.X=1`` or ``-C zmq.prefix=...`` after a port)."""
    aliases: Mapping[str, str] = settings.cmake_aliases if settings else {}
    extra = frozenset(settings.cmake_forward if settings else ())
    unused = sorted(name for name in config
                    if name not in option_names and name not in aliases and not _is_forwarded(name, extra, switches))
    if not unused:
        return
    name = unused[0]
    close = difflib.get_close_matches(name, [*option_names, *extra, *aliases], n=1)
    if name.startswith("cmake.define."):
        hint = (f"scikit-build-core's `-C cmake.define.NAME=VALUE` is `-C NAME=VALUE` here: "
                f"`-C {name.removeprefix('cmake.define.')}=...`")
    elif close:
        hint = f"Did you mean `{close[0]}`"
    else:
        hint = f"If it is a CMake variable, list {name} in [tool.buildkit] cmake-forward"
    raise ConfigError(
        f"Config setting{'s' if len(unused) > 1 else ''} {', '.join(unused)}: not a build option nor a variable "
        "forwarded to CMake, so it would change nothing.",
        f"{hint}. Config settings take a build option's variable or [tool.buildkit] key (`buildkit options .` "
        "lists them) or a variable forwarded to CMake: one starting with BUILD_, USE_ or CMAKE_, or one "
        "named in [tool.buildkit] cmake-forward or cmake-aliases.")


def _arguments_defining(arguments: tuple[str, ...]) -> Iterator[tuple[str, str, str | None]]:
    """Each definition among CMake arguments (``-DNAME=``, ``-DNAME:TYPE=``, ``-D NAME=``):
    its spelling, the variable's name and its value (None without ``=``)."""
    for index, argument in enumerate(arguments):
        if not argument.startswith("-D"):
            continue
        definition = arguments[index + 1] if argument == "-D" and index + 1 < len(arguments) else argument[2:]
        name, equals, value = definition.partition("=")
        yield (f"{argument} {definition}" if argument == "-D" else argument), name.split(":", 1)[0], (
            value if equals else None)


def argument_definitions(arguments: tuple[str, ...]) -> dict[str, str]:
    """The variables CMake arguments (CMAKE_ARGS) set, by name, the last definition winning as in CMake."""
    return {name: value for _, name, value in _arguments_defining(arguments) if value is not None}


def refuse_reserved_arguments(arguments: tuple[str, ...], source: str) -> None:
    """Refuse CMAKE_ARGS that set a reserved variable: ``-DNAME=``, ``-DNAME:TYPE=``,
    ``-D NAME=`` and CMake's ``--install-prefix``."""
    for spelling, name, _ in _arguments_defining(arguments):
        if name in RESERVED_VARIABLES:
            _refuse_reserved(spelling, f"CMAKE_ARGS ({source})")
    for argument in arguments:
        if argument.split("=", 1)[0] == "--install-prefix":
            _refuse_reserved(argument, f"CMAKE_ARGS ({source})")


def _refuse_reserved(spelling: str, where: str) -> None:
    raise ConfigError(
        f"{spelling} is set in {where}, but buildkit sets the install prefix itself: CMake installs into the "
        "package tree (the folder `install-prefix` in [tool.buildkit] picks), or into a wheel's staging tree.",
        "Remove it. To install somewhere else, build a wheel and install that; to put files in another folder "
        "of the package, give the install rule a relative DESTINATION.")
