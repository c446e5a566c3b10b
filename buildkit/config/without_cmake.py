"""The options of a CMake build, in a project with ``[tool.buildkit] cmake = false``.

No CMake runs for such a project, so an option only the CMake build reads (its
declaration in :mod:`buildkit.config.options` says ``needs_cmake``) has no effect.
Where it was asked for decides what buildkit says:

* written in ``[tool.buildkit]``, beside ``cmake = false``: refused, with the table's keys
  that only a CMake build reads (``ProjectSettings.cmake_only_keys``), in one error;
* a config setting (``pip install -C``), asked for by this one command: a warning by name;
* a variable of the environment, which a shell or CI sets for every build: named in one
  line; the ``BUILD_*``/``USE_*``/``CMAKE_*`` variables that would have been forwarded to
  CMake only with ``VERBOSE=1`` (a CI sets dozens of ``BUILD_*`` variables of its own).

A wheel of the split (library-only, python-only) is refused wherever it is asked for:
it holds what CMake installs.
"""

from __future__ import annotations

from buildkit._util import console
from buildkit.config.options import BuildOptions, option_table
from buildkit.config.settings import ProjectSettings
from buildkit.errors import ConfigError, ModeConflictError

SET_IN_TABLE = "[tool.buildkit]"
CONFIG_SETTING = "config setting"
ENVIRONMENT = "environment"


def check_without_cmake(settings: ProjectSettings, options: BuildOptions) -> None:
    """Refuse, warn about or name what a project without CMake was given for a CMake build."""
    if settings.cmake:
        return
    table = option_table(settings)
    for row in table:
        if row.field in ("library_only", "python_only") and getattr(options, row.field):
            source = options.sources.get(row.field, "default")
            raise ModeConflictError(
                f"{_spelling(row.env, row.key, source)} asks for a {row.field.replace('_', '-')} wheel, but "
                "[tool.buildkit] cmake = false: the project has no CMake build, whose install that wheel would hold.",
                f"Remove {row.key if source == SET_IN_TABLE else row.env}: without CMake a project builds one wheel, "
                "of its Python packages.")
    asked: dict[str, list[str]] = {SET_IN_TABLE: [], CONFIG_SETTING: [], ENVIRONMENT: []}
    for row in table:
        source = options.sources.get(row.field, "default")
        if row.needs_cmake and source in asked:
            asked[source].append(row.key if source == SET_IN_TABLE and row.key else row.env)
    defines = {source: [f"-D{name}" for name, _ in options.cmake_defines
                        if options.sources.get(f"-D{name}") == source] for source in asked}
    if written := [*settings.cmake_only_keys, *(f"{SET_IN_TABLE} {key}" for key in asked[SET_IN_TABLE])]:
        raise ConfigError(f"{SET_IN_TABLE} cmake = false builds no CMake project, but {', '.join(written)} "
                          f"{'is' if len(written) == 1 else 'are'} read by the CMake build only.",
                          "Remove them, or remove `cmake = false` if the project has a CMakeLists.txt "
                          f"(docs/configuration.md marks every key that needs CMake). They are read from "
                          f"{settings.root / 'pyproject.toml'}.")
    if unused := asked[CONFIG_SETTING] + defines[CONFIG_SETTING]:
        console.warn(f"ignored config setting{'s' if len(unused) > 1 else ''} {', '.join(unused)}: "
                     "[tool.buildkit] cmake = false, so no CMake build reads them")
    if asked[ENVIRONMENT]:
        console.info(f"not used without CMake (cmake = false): {', '.join(asked[ENVIRONMENT])} from the environment")
    if defines[ENVIRONMENT]:
        console.detail(f"not forwarded (cmake = false, no CMake build): {', '.join(defines[ENVIRONMENT])}")


def _spelling(variable: str, key: str | None, source: str) -> str:
    """How the user asked: ``library-only = true`` in the table, else the variable."""
    if source == SET_IN_TABLE and key:
        return f"{SET_IN_TABLE} {key} = true"
    return f"{variable}=1 ({'a config setting' if source == CONFIG_SETTING else 'the environment'})"
