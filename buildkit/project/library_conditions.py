"""The ``when`` of ``library-dependencies``: decided before CMake runs, checked after.

buildkit finds a library dependency before the configure, because the configure needs it
(on ``CMAKE_PREFIX_PATH``, as ``<package>_ROOT``, as FindCUDAToolkit's library paths).  The
cache cannot say yet what the configure will make of the condition's variables, so the
condition is read from what the configure will be told, its command line's definitions,
over the build folder's cache (:class:`BeforeConfigure`).  The PEP 517 hook reads it the
same way to ask for the distribution as a build requirement.  After the configure the
cache it wrote decides: where it disagrees (a CMake option's default, a ``FORCE``), the
build went without a library it links, or found one it does not, and stops by name
(:meth:`Decision.check_after_configure`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from buildkit.builder.configure.cmake_cache import if_variable
from buildkit.config.conditions import BoolCache, evaluate_condition, parse_condition
from buildkit.config.options import BuildOptions
from buildkit.config.settings import LibraryDependency, ProjectSettings
from buildkit.errors import BuildkitError
from buildkit.package.dependencies import find_dependency


@dataclass(frozen=True)
class BeforeConfigure:
    """The cache as the next configure starts it: the command line's definitions (the forwarded
    variables, then CMAKE_ARGS's ``-D``) over the build folder's cache, if it has one."""

    definitions: Mapping[str, str]
    cache: BoolCache | None
    origins: Mapping[str, str]  # where each definition comes from, for a message

    @classmethod
    def of(cls, options: BuildOptions, cache: BoolCache | None) -> BeforeConfigure:
        return cls(options.configure_definitions(), cache, options.definition_origins())

    def get_bool(self, name: str) -> bool:
        if name in self.definitions:
            return if_variable(name, self.definitions[name])
        if self.cache is None:
            raise KeyError(name)
        return self.cache.get_bool(name)

    def describe(self, name: str) -> str:
        """Where the variable's value comes from, for a message."""
        if name in self.definitions:
            return f"{name}={self.definitions[name]} from {self.origins.get(name, 'the environment')}"
        try:
            return f"{name} {'on' if self.get_bool(name) else 'off'} in the earlier configure's cache"
        except KeyError:
            return f"{name} set by nothing (off)"

    def describe_condition(self, when: str) -> str:
        return "; ".join(self.describe(name) for name in condition_variables(when))


def condition_variables(when: str) -> list[str]:
    return sorted({name for group in parse_condition(when) for name, _ in group})


@dataclass(frozen=True)
class Decision:
    """Which library dependencies a build links, decided once, before its configure."""

    dependencies: Sequence[LibraryDependency]
    before: BeforeConfigure
    holds: Mapping[str, bool]  # by distribution; one without a condition always holds

    @classmethod
    def before_configure(cls, settings: ProjectSettings, options: BuildOptions, cache: BoolCache | None) -> Decision:
        """From the options and the build folder's cache (None: none, or a damaged one)."""
        before = BeforeConfigure.of(options, cache)
        return cls(settings.library_dependencies, before,
                   {d.distribution: d.when is None or evaluate_condition(d.when, before)
                    for d in settings.library_dependencies})

    def conditional(self) -> list[LibraryDependency]:
        return [d for d in self.dependencies if d.when is not None]

    def pins_before_the_build(self, project_name: str) -> list[str]:
        """The requirements on the dependencies that hold, as found where the build runs, before the
        build: a conditional one not installed yet is named without a pin.  PEP 517's get_requires
        hook asks for it, and setuptools runs the project (egg_info) for that hook before the
        frontend installs it; a build that then lacks it stops at its configure, with the error
        saying where to install it."""
        pins = []
        for declared in self.dependencies:
            if self.holds[declared.distribution]:
                try:
                    pins.append(find_dependency(declared, project=project_name).requirement())
                except BuildkitError:
                    if declared.when is None:
                        raise
                    pins.append(declared.distribution)
        return pins

    def build_requirements(self) -> list[str]:
        """The PEP 517 hook's extra build requirements: each conditional dependency that holds.  An
        unconditional one is the project's to list in ``[build-system] requires`` (with the pin it
        needs); a conditional one cannot be listed there."""
        return [d.distribution for d in self.conditional() if self.holds[d.distribution]]

    def check_after_configure(self, cache: BoolCache | None, failure: BaseException | None = None) -> None:
        """Stop when the cache the configure wrote answers a condition otherwise (the cause of
        ``failure``, the build's own error, when the configure or the build failed)."""
        for dependency in self.dependencies:
            if dependency.when is not None and evaluate_condition(dependency.when, cache) != self.holds[
                    dependency.distribution]:
                raise _disagreement(dependency, dependency.when, self.before, cache) from failure


def _disagreement(dependency: LibraryDependency, when: str, before: BeforeConfigure,
                  cache: BoolCache | None) -> BuildkitError:
    after = evaluate_condition(when, cache)
    names = condition_variables(when)
    now = ", ".join(f"{name} {_state(cache, name)}" for name in names)
    if after:
        consequence = (f"so this build went without {dependency.distribution}: not on CMake's search path, "
                       "not required by the wheel, not preloaded")
        hint = (f"Set {' and '.join(names)} in the environment (or CMAKE_ARGS) to the value you want, e.g. "
                f"`{names[0]}=ON`: a CMake option's default is only known after the configure.")
    else:
        consequence = (f"so this build would require and preload {dependency.distribution} though the "
                       "configure turned it off")
        hint = ("The project's CMake code overrode the value given (a FORCE, or a dependent option): set the "
                "variables to what it keeps, or write the condition with the variable that decides "
                f"(e.g. `USE_CUDA and {names[0]}`).")
    return BuildkitError(
        f"The library dependency {dependency.distribution} has `when = \"{when}\"`, which "
        f"{'holds' if after else 'does not hold'} in the cache this configure wrote ({now}) but "
        f"{'did not' if after else 'did'} before it, when buildkit found library dependencies "
        f"({before.describe_condition(when)}); {consequence}.", hint)


def _state(cache: BoolCache | None, name: str) -> str:
    try:
        return "on" if cache is not None and cache.get_bool(name) else "off"
    except KeyError:
        return "unset"
