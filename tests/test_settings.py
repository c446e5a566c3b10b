"""[tool.buildkit] as typed settings: derived defaults, typed sub-tables, and a check
that every key buildkit reads anywhere is declared."""

from __future__ import annotations

import ast
import dataclasses
import re
import types
import typing
from pathlib import Path

import pytest

import buildkit
from buildkit._util.interpreter import soabi
from buildkit.config.modes import WheelMode
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import (
    SETTINGS,
    CMakeExtension,
    OptionalPackage,
    PackageDataEntry,
    ProjectSettings,
    Script,
    StubExtension,
    load_settings,
)
from buildkit.errors import ConfigError
from buildkit_testing.projects import write_pyproject


def load(tmp_path, table: str):
    return load_settings(write_pyproject(tmp_path, table, name="my-proj"), option_keys())


def test_defaults_are_derived_from_the_project_name(tmp_path):
    settings = load(tmp_path, "")
    assert settings.package == "my_proj"
    assert settings.env_prefix == "MY_PROJ"
    assert settings.library_distribution == "libmy-proj"
    assert settings.build_dir == (tmp_path / "build" / soabi()).resolve()
    assert settings.source_dir == tmp_path.resolve()
    assert settings.package_dir == tmp_path.resolve() / "my_proj"
    assert settings.extension is None and settings.scripts == () and settings.job_memory_mb == 1024
    assert settings.cmake_aliases == {"CUDA_HOST_COMPILER": "CMAKE_CUDA_HOST_COMPILER"}


def test_env_prefix_follows_an_explicit_package(tmp_path):
    settings = load(tmp_path, 'package = "tl.core"\nbuild-dir = "out/b"\n')
    assert settings.env_prefix == "TL" and settings.package_dir == tmp_path.resolve() / "tl" / "core"
    assert settings.build_dir == (tmp_path / "out" / "b").resolve()


def test_sub_tables_are_typed(tmp_path):
    settings = load(tmp_path, """
extension = { name = "p._C", sources = ["csrc/stub.c"], libraries = ["p_python"], define-macros = { N = "1" } }
cmake-extensions = [{ name = "p.fn._C", when = "BUILD_FN" }]
optional-packages = [{ package = "p.fn", when = "BUILD_FN" }]
scripts = [{ name = "p-info", target = "p.info:main" }, { name = "p-fn", target = "p.fn:main", when = "BUILD_FN" }]
cmake-defines = { USE_X = true, LEVEL = 2, NAME = "n" }
max-jobs = 3

[[tool.buildkit.package-data]]
include = "extra/*.txt"
modes = "full"
when = "USE_X and not USE_Y"
""")
    assert settings.extension == StubExtension(name="p._C", sources=("csrc/stub.c",), libraries=("p_python",),
                                               define_macros={"N": "1"})
    assert settings.extension.rpath == "lib" and settings.extension.include_dirs == ()
    assert settings.cmake_extensions == (CMakeExtension("p.fn._C", "BUILD_FN"),)
    assert settings.optional_packages == (OptionalPackage("p.fn", "BUILD_FN"),)
    assert settings.scripts == (Script("p-info", "p.info:main"), Script("p-fn", "p.fn:main", "BUILD_FN"))
    assert settings.package_data == (PackageDataEntry(("extra/*.txt",), modes=frozenset({WheelMode.FULL}),
                                                      when="USE_X and not USE_Y"),)
    assert settings.cmake_defines == {"USE_X": True, "LEVEL": 2, "NAME": "n"}
    assert settings.option_defaults == {"max-jobs": 3}


def test_option_keys_take_their_own_types_and_strings(tmp_path):
    settings = load(tmp_path, 'max-jobs = 4\nuse-ninja = false\nverbose = "on"\nbuild-type = "debug"\n')
    options = load_options(settings, {})
    assert (options.max_jobs, options.use_ninja, options.verbose) == (4, False, True)
    assert options.default_build_type == "Debug" and options.sources["max_jobs"] == "[tool.buildkit]"


def test_a_bad_option_key_fails_even_when_the_environment_overrides_it(tmp_path):
    settings = load(tmp_path, "max-jobs = [1]\n")
    with pytest.raises(ConfigError, match=r"\[tool.buildkit\] max-jobs must be a positive integer, not \[1\]"):
        load_options(settings, {"MAX_JOBS": "2"})


def test_malformed_toml_and_missing_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\nname=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.buildkit]\n")
    with pytest.raises(ConfigError, match="no \\[project\\] name"):
        load_settings(tmp_path)
    with pytest.raises(ConfigError, match="No pyproject.toml"):
        load_settings(tmp_path / "missing")


def test_the_reference_rows_are_the_declared_fields():
    declared = [f.name.replace("_", "-") for f in dataclasses.fields(ProjectSettings)
                if f.name not in ("root", "project_name", "dynamic", "option_defaults", "setuptools_table", "layout", "build_dir_template",
                                   "static_version", "project_fields", "cmake_only_keys", "generated_source",
                                   "configuration_inputs")]
    assert [row.key for row in SETTINGS] == declared


# --- every key buildkit reads is declared ------------------------------------------------

BUILDKIT = Path(buildkit.__file__).resolve().parent
EACH = "each"  # marks a list of tables: iterating it yields the sub-table class


def _table_of(hint: typing.Any) -> typing.Any:
    """What reading an attribute of this type yields for the walk: a settings class,
    (EACH, class) for a list of tables, or None for a plain value."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        hint = args[0]
    if typing.get_origin(hint) is tuple and dataclasses.is_dataclass(typing.get_args(hint)[0]):
        return (EACH, typing.get_args(hint)[0])
    return hint if dataclasses.is_dataclass(hint) else None


def readable(cls: type) -> dict[str, typing.Any]:
    """The attributes a settings class declares (fields, properties, methods) and what each yields."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)} | {n for n in vars(cls) if not n.startswith("_")}
    return {name: _table_of(hints.get(name)) for name in names}


SETTINGS_CLASSES = (ProjectSettings, *{row.table for row in SETTINGS if row.table})


def _annotated(annotation: str) -> typing.Any:
    """The settings class (or (EACH, class)) a parameter annotation names, if any."""
    for cls in SETTINGS_CLASSES:
        if re.search(rf"\b(Sequence|Iterable|tuple|list)\[{cls.__name__}\b", annotation):
            return (EACH, cls)
        if re.search(rf"\b{cls.__name__}\b", annotation):
            return cls
    return None


class SettingsReads:
    """Reads of settings attributes in one module's source: ``<expr>.settings.<attr>``,
    names bound to ProjectSettings (``load_settings(...)``, ``x = <expr>.settings``),
    names bound to sub-table entries (``for s in <settings>.scripts``,
    ``stub = <settings>.extension``) and parameters annotated with a settings class."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, str]] = []  # (where, "Class.attr" or "Class['key']")
        self.undeclared: list[str] = []

    def scan(self, source: str, name: str) -> None:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self._scan_scope(node, name)

    def _scan_scope(self, scope: ast.AST, name: str) -> None:
        env = self._bindings(scope)
        for node in ast.walk(scope):
            if isinstance(node, ast.Attribute) and node.attr != "settings":
                owner = self._resolve(node.value, env)
                if isinstance(owner, type):
                    self._record(name, node, f"{owner.__name__}.{node.attr}", node.attr in readable(owner))
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                owner = self._resolve(node.value, env)
                if isinstance(owner, type) and isinstance(node.slice.value, str):
                    key = node.slice.value
                    self._record(name, node, f"{owner.__name__}[{key!r}]", key.replace("-", "_") in readable(owner))

    def _record(self, name: str, node: ast.AST, read: str, declared: bool) -> None:
        where = f"{name}:{node.lineno}"
        self.reads.append((where, read))
        if not declared:
            self.undeclared.append(f"{where}: {read}")

    def _bindings(self, scope: ast.AST) -> dict[str, typing.Any]:
        env: dict[str, typing.Any] = {}
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in [*scope.args.args, *scope.args.kwonlyargs]:
                if arg.annotation is not None and (found := _annotated(ast.unparse(arg.annotation))):
                    env[arg.arg] = found
        for _ in range(3):  # a binding may use an earlier one: `stub = project.settings.extension`
            for node in ast.walk(scope):
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
                    targets, value = [node.target], node.value
                elif isinstance(node, (ast.For, ast.comprehension)):
                    found = self._resolve(node.iter, env)
                    if isinstance(found, tuple) and isinstance(node.target, ast.Name):
                        env[node.target.id] = found[1]
                    continue
                else:
                    continue
                found = self._resolve(value, env) if value is not None else None
                for target in targets:
                    if isinstance(target, ast.Name) and found is not None:
                        env[target.id] = found
        return env

    def _resolve(self, node: ast.AST, env: dict[str, typing.Any]) -> typing.Any:
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.Attribute):
            if node.attr == "settings":  # project.settings, self.settings: the one ProjectSettings
                return ProjectSettings
            owner = self._resolve(node.value, env)
            return readable(owner).get(node.attr) if isinstance(owner, type) else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "load_settings":
            return ProjectSettings
        if isinstance(node, ast.IfExp):
            return self._resolve(node.body, env) or self._resolve(node.orelse, env)
        if isinstance(node, ast.BoolOp):
            return next(filter(None, (self._resolve(v, env) for v in node.values)), None)
        return None


def scan_buildkit() -> SettingsReads:
    reads = SettingsReads()
    for path in sorted(BUILDKIT.rglob("*.py")):
        reads.scan(path.read_text(encoding="utf-8"), str(path.relative_to(BUILDKIT.parent)))
    return reads


def test_every_key_buildkit_reads_is_declared():
    reads = scan_buildkit()
    assert reads.undeclared == []
    read = {attr for _, attr in reads.reads}
    # The walk must see the reads it is meant to check, sub-table entries included.
    assert len(read) > 30
    assert {"ProjectSettings.version_file", "StubExtension.sources", "StubExtension.define_macros", "Script.target",
            "OptionalPackage.when", "CMakeExtension.name", "PackageDataEntry.modes",
            "ProjectSettings.cmake_minimum_version"} <= read


def test_the_read_check_catches_an_undeclared_read():
    source = '''
def f(project, settings: ProjectSettings | None):
    a = project.settings.bogus_key
    b = settings["version-fil"]
    for script in project.settings.scripts:
        print(script.targt)
    stub = project.settings.extension
    return stub.source, settings.version_file
'''
    reads = SettingsReads()
    reads.scan(source, "snippet")
    assert sorted(reads.undeclared) == [
        "snippet:3: ProjectSettings.bogus_key", "snippet:4: ProjectSettings['version-fil']",
        "snippet:6: Script.targt", "snippet:8: StubExtension.source"]
