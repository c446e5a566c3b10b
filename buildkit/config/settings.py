"""The ``[tool.buildkit]`` table of a consuming project's ``pyproject.toml``.

Every key is declared once in :data:`SETTINGS` (name, type, default, documentation);
the reader validates strictly against that table and the configuration reference in
``docs/configuration.md`` is generated from it.  Keys that are also build options
(``build-type``, ``max-jobs``...) are declared in :mod:`buildkit.config.options` and only
provide defaults there.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from buildkit.errors import ConfigError

TABLE = "tool.buildkit"


@dataclass(frozen=True)
class Setting:
    key: str
    kind: str  # a short type name shown in the docs: "string", "list of strings", ...
    default: Any
    doc: str
    check: Callable[[Any], bool]


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_str_table(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items())


def _is_define_table(v: Any) -> bool:
    return isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(x, (str, bool, int)) for k, x in v.items())


def _is_positive_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _is_table_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


def _is_table(v: Any) -> bool:
    return isinstance(v, dict)


_S = Setting
SETTINGS: tuple[Setting, ...] = (
    _S("package", "string", None,
       "Import package that CMake installs into (`<package>/lib`, `include`, `share/cmake`). "
       "Default: the `[project]` name with `-` replaced by `_`.", _is_str),
    _S("cmake-source-dir", "string", ".", "Folder holding the top-level `CMakeLists.txt`, relative to the project.", _is_str),
    _S("build-dir", "string", "build", "The kept CMake build folder, relative to the project.", _is_str),
    _S("cmake-minimum-version", "string", "3.24", "Oldest cmake accepted; an older system cmake is replaced by the PyPI one.", _is_str),
    _S("env-prefix", "string", None,
       "Prefix of the project-named variables `<PREFIX>_BUILD_VERSION`, `<PREFIX>_BUILD_NUMBER`, "
       "`<PREFIX>_EXTRA_INSTALL_REQUIREMENTS` and `<PREFIX>_CUDA_ARCH_LIST`. Default: the package name upper-cased.", _is_str),
    _S("library-only-variable", "string", "BUILD_LIBTORCH_WHL", "Variable that selects the library-only wheel.", _is_str),
    _S("python-only-variable", "string", "BUILD_PYTHON_ONLY", "Variable that selects the python-only wheel.", _is_str),
    _S("library-distribution", "string", None,
       "Distribution name of the library-only wheel, pinned by the python-only wheel. Default: `lib<package>`.", _is_str),
    _S("version-file", "string", "version.txt", "File holding the base version; `+git<sha7>` is appended in a git checkout.", _is_str),
    _S("dependencies", "list of strings", [], "Install requirements of the wheel (the `[project]` table lists `dependencies` as dynamic).", _is_str_list),
    _S("licenses", "list of strings", [], "Third-party license files concatenated into the wheel's license file.", _is_str_list),
    _S("readme", "string", "README.md", "File used as the long description.", _is_str),
    _S("cmake-defines", "table of strings", {}, "`-D` values passed to every configure; the environment and config settings override them.", _is_define_table),
    _S("cmake-aliases", "table of strings", {"CUDA_HOST_COMPILER": "CMAKE_CUDA_HOST_COMPILER"},
       "Environment variables forwarded to CMake under another name (`ENV_NAME = \"CMAKE_NAME\"`).", _is_str_table),
    _S("cmake-forward", "list of strings", [], "Extra environment variables forwarded to CMake as-is (besides `BUILD_*`, `USE_*`, `CMAKE_*`).", _is_str_list),
    _S("extension", "table", None,
       "The thin `_C` stub extension built by `build_ext`: `name`, `sources`, `libraries` (CMake libraries it links), "
       "`rpath` (default `lib`).", _is_table),
    _S("cmake-extensions", "list of tables", [],
       "Extension modules built and installed by CMake (`name`, optional `when`), registered with setuptools so wheels include them.", _is_table_list),
    _S("optional-packages", "list of tables", [], "Subpackages shipped only when a cache condition holds (`package`, `when`).", _is_table_list),
    _S("scripts", "list of tables", [], "Console scripts (`name`, `target`, optional `when`); library-only wheels get none.", _is_table_list),
    _S("package-data", "list of tables", [],
       "Extra package_data rules (`include`, `exclude`, `modes`, `when`) added to the defaults.", _is_table_list),
    _S("codegen-package", "string", None, "Subpackage (dotted) holding a code generator that ships in the wheel, e.g. `tensorlet._codegen`.", _is_str),
    _S("prioritized-text-file", "string", "cmake/prioritized_text.txt",
       "Symbols (one per line) placed first in .text when USE_PRIORITIZED_TEXT_FOR_LD=1.", _is_str),
    _S("preload-libraries", "list of strings", [],
       "Native libraries (CMake target names) that `<package>/_native.py` preloads before the extension, "
       "from the package's own `lib/` or from the installed library distribution.", _is_str_list),
    _S("smoke-test", "string", None,
       "Command `buildkit wheels` runs (in a shell, from an empty folder) in a fresh venv with the built wheel "
       "installed, after `import <package>`; e.g. `python -c 'import pkg; pkg.selftest()'`.", _is_str),
    _S("job-memory-mb", "positive integer", 1024, "Memory one compile job needs; caps the default job count.", _is_positive_int),
    _S("cuda-job-memory-mb", "positive integer", 3072, "Memory one nvcc job needs when CUDA is on.", _is_positive_int),
)
_BY_KEY = {s.key: s for s in SETTINGS}


@dataclass(frozen=True)
class ProjectSettings:
    """The validated ``[tool.buildkit]`` table plus the ``[project]`` name."""

    root: Path
    project_name: str
    values: Mapping[str, Any] = field(default_factory=dict)
    # [project] dynamic: the metadata fields buildkit may supply to setuptools.
    dynamic: frozenset[str] = frozenset()
    option_defaults: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        if key not in _BY_KEY:
            raise KeyError(key)
        if key in self.values:
            return self.values[key]
        return _derived_default(self, key)

    @property
    def package(self) -> str:
        return self["package"]

    @property
    def package_dir(self) -> Path:
        return self.root / Path(*self.package.split("."))

    @property
    def build_dir(self) -> Path:
        return (self.root / self["build-dir"]).resolve()

    @property
    def source_dir(self) -> Path:
        return (self.root / self["cmake-source-dir"]).resolve()

    @property
    def env_prefix(self) -> str:
        return self["env-prefix"]


def _derived_default(settings: ProjectSettings, key: str) -> Any:
    if key == "package":
        return settings.project_name.replace("-", "_").replace(".", "_")
    if key == "env-prefix":
        return settings.package.split(".")[0].upper()
    if key == "library-distribution":
        return "lib" + settings.project_name.replace("_", "-")
    default = _BY_KEY[key].default
    return default.copy() if isinstance(default, (list, dict)) else default


def load_settings(root: Path | str, option_keys: frozenset[str] = frozenset()) -> ProjectSettings:
    """Read and validate ``<root>/pyproject.toml``.

    ``option_keys`` are the build-option keys (``build-type``...) accepted in the
    table as defaults; :mod:`buildkit.config.options` passes them so that this module
    doesn't need to import it.
    """
    root = Path(root).resolve()
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"No pyproject.toml in {root}.",
                          "buildkit reads the project's name from [project] and its build settings from "
                          "[tool.buildkit]; run `buildkit init` to create one, or point buildkit at the project folder.")
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}.", "Fix the syntax error and run the build again.")
    project = data.get("project", {})
    name = project.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path} has no [project] name.", "Add `[project]` with `name = \"...\"`.")
    table = data.get("tool", {}).get("buildkit", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{TABLE}] in {path} must be a table.", "Write it as `[tool.buildkit]` followed by keys.")
    values: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for key, value in table.items():
        if key in option_keys:
            defaults[key] = value
            continue
        setting = _BY_KEY.get(key)
        if setting is None:
            known = ", ".join(sorted([*_BY_KEY, *option_keys]))
            raise ConfigError(f"Unknown key `{key}` in [{TABLE}] of {path}.",
                              f"Check the spelling; the known keys are: {known}.")
        if not setting.check(value):
            raise ConfigError(f"[{TABLE}] key `{key}` in {path} must be a {setting.kind}, not {value!r}.",
                              f"{setting.doc} See docs/configuration.md.")
        values[key] = value
    dynamic = project.get("dynamic", [])
    return ProjectSettings(root=root, project_name=name, values=values, option_defaults=defaults,
                           dynamic=frozenset(dynamic if isinstance(dynamic, list) else []))
