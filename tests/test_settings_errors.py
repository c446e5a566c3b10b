"""Every bad [tool.buildkit] value is one ConfigError naming the key, the value and the
expected form; never a traceback.

The expected messages are written out here, not generated from the declarations: a
change of wording is a deliberate change of this file.  Each key (top level, build
option, sub-table) has a wrong-type case; the coverage test below fails when a new
key is declared without one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from buildkit.config.options import option_keys
from buildkit.config.schema import describe
from buildkit.config.settings import SETTINGS, load_settings
from buildkit.errors import ConfigError
from buildkit.frontends.cli.main import main as cli_main
from buildkit.project import Project
from buildkit_testing.projects import write_pyproject

# (key, the table's lines, the error message)
WRONG_TYPES = [
    ("package", 'package = 12',
     "[tool.buildkit] package must be a dotted module name, not 12."),
    ("packages", 'packages = "src/pkg"',
     "[tool.buildkit] packages must be a list of strings, not 'src/pkg'."),
    ("py-modules", 'py-modules = ["a-b"]',
     "[tool.buildkit] py-modules must be a list of module names, not ['a-b']."),
    ("cmake", 'cmake = "no"',
     "[tool.buildkit] cmake must be a boolean, not 'no'."),
    ("install-prefix", 'install-prefix = "root"',
     "[tool.buildkit] install-prefix must be one of `package` or `wheel-root`, not 'root'."),
    ("install-dir", 'install-dir = 1',
     "[tool.buildkit] install-dir must be a folder below the wheel's root, or `\"\"`, not 1."),
    ("cmake-source-dir", 'cmake-source-dir = ["src"]',
     "[tool.buildkit] cmake-source-dir must be a string, not ['src']."),
    ("build-dir", 'build-dir = 12',
     "[tool.buildkit] build-dir must be a folder, not 12."),
    ("cmake-minimum-version", 'cmake-minimum-version = 3.24',
     "[tool.buildkit] cmake-minimum-version must be a string, not 3.24."),
    ("env-prefix", 'env-prefix = true',
     "[tool.buildkit] env-prefix must be a string, not True."),
    ("library-only-variable", 'library-only-variable = 1',
     "[tool.buildkit] library-only-variable must be a string, not 1."),
    ("python-only-variable", 'python-only-variable = ["BUILD_PY"]',
     "[tool.buildkit] python-only-variable must be a string, not ['BUILD_PY']."),
    ("library-distribution", 'library-distribution = { name = "libx" }',
     "[tool.buildkit] library-distribution must be a string, not {'name': 'libx'}."),
    ("version-file", 'version-file = 1',
     "[tool.buildkit] version-file must be a string, not 1."),
    ("version-module", 'version-module = "../setup.py"',
     "[tool.buildkit] version-module must be a `.py` path inside the package, or `\"\"`, not '../setup.py'."),
    ("dependencies", 'dependencies = "numpy"',
     "[tool.buildkit] dependencies must be a list of strings, not 'numpy'."),
    ("licenses", 'licenses = ["LICENSE", 2]',
     "[tool.buildkit] licenses must be a list of paths inside the project, not ['LICENSE', 2]."),
    ("readme", 'readme = false',
     "[tool.buildkit] readme must be a path inside the project, not False."),
    ("allow-outside-links", 'allow-outside-links = "src/pkg/data.txt"',
     "[tool.buildkit] allow-outside-links must be a list of paths inside the project, not 'src/pkg/data.txt'."),
    ("cmake-defines", 'cmake-defines = { USE_X = [1] }',
     "[tool.buildkit] cmake-defines must be a table of strings, booleans, integers or lists of strings, not {'USE_X': [1]}."),
    ("cmake-aliases", 'cmake-aliases = { CUDA_HOST_COMPILER = true }',
     "[tool.buildkit] cmake-aliases must be a table of strings, not {'CUDA_HOST_COMPILER': True}."),
    ("cmake-forward", 'cmake-forward = "BLAS"',
     "[tool.buildkit] cmake-forward must be a list of strings, not 'BLAS'."),
    ("extension", 'extension = "demo._C"',
     "[tool.buildkit] extension must be a table, not 'demo._C'."),
    ("cmake-extensions", 'cmake-extensions = { name = "demo._ext" }',
     "[tool.buildkit] cmake-extensions must be a list of tables, not {'name': 'demo._ext'}."),
    ("optional-packages", 'optional-packages = "demo.extra"',
     "[tool.buildkit] optional-packages must be a list of tables, not 'demo.extra'."),
    ("scripts", 'scripts = { name = "x", target = "demo:main" }',
     "[tool.buildkit] scripts must be a list of tables, not {'name': 'x', 'target': 'demo:main'}."),
    ("package-data", 'package-data = "lib/*"',
     "[tool.buildkit] package-data must be a list of tables, not 'lib/*'."),
    ("wheel-exclude", 'wheel-exclude = "pkg/tests/**"',
     "[tool.buildkit] wheel-exclude must be a list of globs, not 'pkg/tests/**'."),
    ("codegen-package", 'codegen-package = 1',
     "[tool.buildkit] codegen-package must be a dotted module name, not 1."),
    ("prioritized-text-file", 'prioritized-text-file = ["a.txt"]',
     "[tool.buildkit] prioritized-text-file must be a string, not ['a.txt']."),
    ("preload-libraries", 'preload-libraries = "demo"',
     "[tool.buildkit] preload-libraries must be a list of strings, not 'demo'."),
    ("library-dependencies", 'library-dependencies = "libfmt"',
     "[tool.buildkit] library-dependencies must be a list of tables, not 'libfmt'."),
    ("cuda-runtime", 'cuda-runtime = "conda"',
     "[tool.buildkit] cuda-runtime must be one of `wheel`, `vendor` or `system`, not 'conda'."),
    ("py-api", 'py-api = "abi3"',
     "[tool.buildkit] py-api must be one of `cp3X`, `py3` or `py2.py3`, not 'abi3'."),
    ("smoke-test", 'smoke-test = ["python", "-c", "1"]',
     "[tool.buildkit] smoke-test must be a string, not ['python', '-c', '1']."),
    ("job-memory-mb", 'job-memory-mb = "lots"',
     "[tool.buildkit] job-memory-mb must be a positive integer, not 'lots'."),
    ("cuda-job-memory-mb", 'cuda-job-memory-mb = 0',
     "[tool.buildkit] cuda-job-memory-mb must be a positive integer, not 0."),
    # Build options: the table gives their defaults, checked by the option's parser.
    ("build-type", 'build-type = 1',
     "[tool.buildkit] build-type must be a build type, not 1."),
    ("max-jobs", 'max-jobs = [1]',
     "[tool.buildkit] max-jobs must be a positive integer, not [1]."),
    ("use-ninja", 'use-ninja = 3',
     "[tool.buildkit] use-ninja must be a boolean, not 3."),
    ("generator", 'generator = false',
     "[tool.buildkit] generator must be a string, not False."),
    ("verbose", 'verbose = "perhaps"',
     "[tool.buildkit] verbose must be a boolean, not 'perhaps'."),
    ("editable-rebuild", 'editable-rebuild = "always"',
     "[tool.buildkit] editable-rebuild must be a boolean, not 'always'."),
    ("editable-verbose", 'editable-verbose = 1',
     "[tool.buildkit] editable-verbose must be a boolean, not 1."),
    ("compiler-launcher", 'compiler-launcher = ["ccache"]',
     "[tool.buildkit] compiler-launcher must be a program, not ['ccache']."),
    ("library-only", 'library-only = "perhaps"',
     "[tool.buildkit] library-only must be a boolean, not 'perhaps'."),
    ("cuda-arch-list", 'cuda-arch-list = 75',
     "[tool.buildkit] cuda-arch-list must be an architecture list, not 75."),
    ("develop-cuda-arch-list", 'develop-cuda-arch-list = 1',
     "[tool.buildkit] develop-cuda-arch-list must be an architecture list, not 1."),
    ("cuda-toolkit", 'cuda-toolkit = "conda"',
     "[tool.buildkit] cuda-toolkit must be one of `wheel`, `system` or `auto`, not 'conda'."),
    ("torch-precompiled-headers", 'torch-precompiled-headers = "sometimes"',
     "[tool.buildkit] torch-precompiled-headers must be a boolean, not 'sometimes'."),
    ("dist", 'dist = "distcc"',
     "[tool.buildkit] dist must be one of `none` or `sccache`, not 'distcc'."),
    # Sub-table keys, named with their path.
    ("extension.name", 'extension = { name = "demo/_C", sources = ["stub.c"] }',
     "[tool.buildkit] extension.name must be a dotted module name, not 'demo/_C'."),
    ("extension.sources", 'extension = { name = "demo._C", sources = "stub.c" }',
     "[tool.buildkit] extension.sources must be a non-empty list of strings, not 'stub.c'."),
    ("extension.libraries", 'extension = { name = "demo._C", sources = ["stub.c"], libraries = "demo_python" }',
     "[tool.buildkit] extension.libraries must be a list of strings, not 'demo_python'."),
    ("extension.rpath", 'extension = { name = "demo._C", sources = ["stub.c"], rpath = ["lib"] }',
     "[tool.buildkit] extension.rpath must be a string, not ['lib']."),
    ("extension.include-dirs", 'extension = { name = "demo._C", sources = ["stub.c"], include-dirs = [1] }',
     "[tool.buildkit] extension.include-dirs must be a list of strings, not [1]."),
    ("extension.define-macros",
     'extension = { name = "demo._C", sources = ["stub.c"], define-macros = [["NDEBUG", "1"]] }',
     "[tool.buildkit] extension.define-macros must be a table of strings, not [['NDEBUG', '1']]."),
    ("cmake-extensions.name", 'cmake-extensions = [{ name = 1 }]',
     "[tool.buildkit] cmake-extensions[0].name must be a dotted module name, not 1."),
    ("cmake-extensions.when", 'cmake-extensions = [{ name = "demo._ext", when = true }]',
     "[tool.buildkit] cmake-extensions[0].when must be a condition, not True."),
    ("optional-packages.package", 'optional-packages = [{ package = 1, when = "USE_X" }]',
     "[tool.buildkit] optional-packages[0].package must be a dotted module name, not 1."),
    ("optional-packages.when", 'optional-packages = [{ package = "demo.extra", when = "USE_X or" }]',
     "[tool.buildkit] optional-packages[0].when: Cannot read the `when` condition 'USE_X or'."),
    ("library-dependencies.distribution", 'library-dependencies = [{ distribution = "lib fmt" }]',
     "[tool.buildkit] library-dependencies[0].distribution must be a distribution name, not 'lib fmt'."),
    ("library-dependencies.cmake-package", 'library-dependencies = [{ distribution = "libfmt", cmake-package = 1 }]',
     "[tool.buildkit] library-dependencies[0].cmake-package must be a string, not 1."),
    ("library-dependencies.version", 'library-dependencies = [{ distribution = "libfmt", version = "compatible" }]',
     "[tool.buildkit] library-dependencies[0].version must be one of `exact`, `same-minor` or `same-major`, "
     "not 'compatible'."),
    ("library-dependencies.when", 'library-dependencies = [{ distribution = "libfmt", when = 1 }]',
     "[tool.buildkit] library-dependencies[0].when must be a condition, not 1."),
    ("scripts.name", 'scripts = [{ name = 1, target = "demo:main" }]',
     ("[tool.buildkit] scripts[0].name must be a script name (letters, digits, `_`, `.` and `-`, not only dots), "
      "not 1.")),
    ("scripts.target", 'scripts = [{ name = "demo", target = "demo.main" }]',
     "[tool.buildkit] scripts[0].target must be an entry point (`module:function`), not 'demo.main'."),
    ("scripts.when", 'scripts = [{ name = "demo", target = "demo:main", when = ["USE_X"] }]',
     "[tool.buildkit] scripts[0].when must be a condition, not ['USE_X']."),
    ("package-data.include", 'package-data = [{ include = ["lib/*", 3] }]',
     "[tool.buildkit] package-data[0].include must be a glob or non-empty list of globs, not ['lib/*', 3]."),
    ("package-data.exclude", 'package-data = [{ include = "lib/*", exclude = [] }]',
     "[tool.buildkit] package-data[0].exclude must be a glob or non-empty list of globs, not []."),
    ("package-data.modes", 'package-data = [{ include = "lib/*", modes = ["everything"] }]',
     "[tool.buildkit] package-data[0].modes must be a wheel mode or list of wheel modes "
     "(`full`, `library-only`, `python-only`), not ['everything']."),
    ("package-data.when", '[[tool.buildkit.package-data]]\ninclude = "lib/*"\nwhen = "not"',
     "[tool.buildkit] package-data[0].when: Cannot read the `when` condition 'not'."),
]

# (case, the table's lines, the error message, a sentence of the hint or None)
MALFORMED = [
    ("package folder outside the project", 'packages = ["../x"]',
     "[tool.buildkit] packages names '../x', which is not a folder inside the project.",
     "Give folders relative to the project, e.g. `src/pkg`."),
    ("readme outside the project", 'readme = "../README.md"',
     "[tool.buildkit] readme must be a path inside the project, not '../README.md'.", "File used as the long"),
    ("license outside the project", 'licenses = ["/etc/passwd"]',
     "[tool.buildkit] licenses must be a list of paths inside the project, not ['/etc/passwd'].",
     "Third-party license files"),
    ("allowed link outside the project", 'allow-outside-links = ["../x"]',
     "[tool.buildkit] allow-outside-links must be a list of paths inside the project, not ['../x'].", None),
    ("script name with a path", 'scripts = [{ name = "../bin/evil", target = "demo:main" }]',
     ("[tool.buildkit] scripts[0].name must be a script name (letters, digits, `_`, `.` and `-`, not only dots), "
      "not '../bin/evil'."), "Command name"),
    ("script name with a shell metacharacter", 'scripts = [{ name = "x;rm", target = "demo:main" }]',
     ("[tool.buildkit] scripts[0].name must be a script name (letters, digits, `_`, `.` and `-`, not only dots), "
      "not 'x;rm'."), None),
    ("two folders for one package", 'packages = ["src/x", "python/x"]',
     "[tool.buildkit] packages lists two folders for the package 'x': 'src/x' and 'python/x'.", "Keep one of them."),
    ("setuptools package-dir not a table", '[tool.setuptools]\npackage-dir = "src"',
     "[tool.setuptools] package-dir must be a table of folder names, not 'src'.",
     'Write it as `package-dir = {"" = "src"}`.'),
    ("extension without sources", 'extension = { name = "p._C" }',
     "[tool.buildkit] extension lacks the required key `sources`: {'name': 'p._C'}.",
     "Write it as a table with `name` and `sources`, and optionally `libraries`, `rpath`, `include-dirs` or "
     "`define-macros`."),
    ("extension without name", '[tool.buildkit.extension]\nsources = ["stub.c"]',
     "[tool.buildkit] extension lacks the required key `name`: {'sources': ['stub.c']}.", None),
    ("extension with empty sources", 'extension = { name = "p._C", sources = [] }',
     "[tool.buildkit] extension.sources must be a non-empty list of strings, not [].",
     'C sources of the stub, relative to the project, e.g. `["csrc/stub.c"]`.'),
    ("extension with an unknown key", 'extension = { name = "p._C", sources = ["stub.c"], libs = ["p_python"] }',
     "Unknown key `libs` in [tool.buildkit] extension; did you mean `libraries`?",
     "The keys of [tool.buildkit] extension are: define-macros, include-dirs, libraries, name, rpath, sources."),
    ("optional package named by a number", 'optional-packages = [{ package = 1 }]',
     "[tool.buildkit] optional-packages[0].package must be a dotted module name, not 1.", None),
    ("optional package without when", 'optional-packages = [{ package = "demo.extra" }]',
     "[tool.buildkit] optional-packages[0] lacks the required key `when`: {'package': 'demo.extra'}.",
     "Write it as a table with `package` and `when`."),
    ("optional package as a string", 'optional-packages = ["demo.extra"]',
     "[tool.buildkit] optional-packages[0] must be a table, not 'demo.extra'.",
     "Write it as a table with `package` and `when`."),
    ("optional package with an unknown key",
     'optional-packages = [{ package = "demo.extra", when = "USE_X", whne = "USE_Y" }]',
     "Unknown key `whne` in [tool.buildkit] optional-packages[0]; did you mean `when`?",
     "The keys of [tool.buildkit] optional-packages[0] are: package, when."),
    ("script without target", 'scripts = [{ name = "x" }]',
     "[tool.buildkit] scripts[0] lacks the required key `target`: {'name': 'x'}.",
     "Write it as a table with `name` and `target`, and optionally `when`."),
    ("second script without name", 'scripts = [{ name = "a", target = "demo:a" }, { target = "demo:b" }]',
     "[tool.buildkit] scripts[1] lacks the required key `name`: {'target': 'demo:b'}.", None),
    ("script with an unknown key", 'scripts = [{ name = "x", target = "demo:main", taget = "demo:other" }]',
     "Unknown key `taget` in [tool.buildkit] scripts[0]; did you mean `target`?",
     "The keys of [tool.buildkit] scripts[0] are: name, target, when."),
    ("cmake extension without name", 'cmake-extensions = [{ when = "USE_X" }]',
     "[tool.buildkit] cmake-extensions[0] lacks the required key `name`: {'when': 'USE_X'}.",
     "Write it as a table with `name` and optionally `when`."),
    ("cmake extension with an unknown key", 'cmake-extensions = [{ name = "demo._ext", condition = "USE_X" }]',
     "Unknown key `condition` in [tool.buildkit] cmake-extensions[0].",
     "The keys of [tool.buildkit] cmake-extensions[0] are: name, when."),
    ("package-data rule without include", '[[tool.buildkit.package-data]]\nexclude = "lib/*.a"',
     "[tool.buildkit] package-data[0] lacks the required key `include`: {'exclude': 'lib/*.a'}.",
     "Write it as a table with `include` and optionally `exclude`, `modes` or `when`."),
    ("package-data rule with an unknown key", 'package-data = [{ include = "lib/*", mode = ["full"] }]',
     "Unknown key `mode` in [tool.buildkit] package-data[0]; did you mean `modes`?",
     "The keys of [tool.buildkit] package-data[0] are: exclude, include, modes, when."),
    ("package-data pattern outside the package", 'package-data = [{ include = "../secrets/*" }]',
     "[tool.buildkit] package-data[0].include: Package-data pattern '../secrets/*' is not a relative path "
     "inside the package.", None),
    ("package-data pattern with ** inside a name", 'package-data = [{ include = "include/a**b" }]',
     "[tool.buildkit] package-data[0].include: Package-data pattern 'include/a**b' uses '**' inside a name.",
     "'**' must be a whole path segment, e.g. 'include/**/*.h'."),
    ("third package-data rule",
     'package-data = [{ include = "a" }, { include = "b" }, { include = "c", modes = "all" }]',
     "[tool.buildkit] package-data[2].modes must be a wheel mode or list of wheel modes "
     "(`full`, `library-only`, `python-only`), not 'all'.", None),
    # install-dir stays below the wheel's root: each way out is its own refusal, naming the value.
    ("install-dir climbing out", 'install-dir = "lib/../../up"',
     "[tool.buildkit] install-dir: 'lib/../../up' climbs out with '..': the install would land outside the "
     "wheel's root.", 'e.g. `install-dir = "cmake_dirs"`'),
    ("install-dir absolute", 'install-dir = "/opt/pkg"',
     "[tool.buildkit] install-dir: '/opt/pkg' is absolute: the install would land outside the wheel.",
     "Write a folder relative to the wheel's root"),
    ("install-dir with a backslash", 'install-dir = "cmake\\\\dirs"',
     "[tool.buildkit] install-dir: 'cmake\\\\dirs' holds a backslash.", "with `/` between its parts"),
    ("install-dir in another wheel tree", 'install-dir = "${SKBUILD_DATA_DIR}/share"',
     "[tool.buildkit] install-dir: '${SKBUILD_DATA_DIR}/share' puts the install into scikit-build-core's data "
     "tree, which buildkit's install-dir does not offer.", "`DESTINATION ${SKBUILD_DATA_DIR}`"),
    ("install-dir from the platlib variable", 'install-dir = "${SKBUILD_PLATLIB_DIR}/cmake_dirs"',
     "[tool.buildkit] install-dir: '${SKBUILD_PLATLIB_DIR}/cmake_dirs' starts with ${SKBUILD_PLATLIB_DIR}, "
     "which install-dir does not expand.", "write what follows it"),
    ("install-dir naming a variable", 'install-dir = "$ENV{HOME}/x"',
     "[tool.buildkit] install-dir: '$ENV{HOME}/x' names a variable, which install-dir does not expand.", None),
    ("install-dir with the package layout", 'install-dir = "cmake_dirs"\ninstall-prefix = "package"',
     "[tool.buildkit] install-dir = 'cmake_dirs' is set with install-prefix = \"package\": install-dir moves the "
     "install prefix below the wheel's root (scikit-build-core's layout), and the package layout installs into "
     "the package's folder instead.", "install-dir makes `wheel-root` its default"),
    ("job count out of range", 'max-jobs = 0',
     "[tool.buildkit] max-jobs must be a positive integer, not 0.",
     "Set [tool.buildkit] max-jobs to a whole number between 1 and 4096, or unset it to let buildkit choose."),
    ("unknown build type", 'build-type = "Fastest"',
     "[tool.buildkit] build-type must be a build type, not 'Fastest'.",
     "Use one of Debug, Release, RelWithDebInfo, MinSizeRel."),
    ("misspelt top-level key", 'buid-dir = "b"',
     "Unknown key `buid-dir` in [tool.buildkit]; did you mean `build-dir`?",
     # A prefix: the full list grows with every new key.
     "The keys of [tool.buildkit] are: allow-outside-links, build-dir, build-type, cmake, cmake-aliases, cmake-defines, "),
    ("unknown top-level key, nothing close", 'colour = "blue"',
     "Unknown key `colour` in [tool.buildkit].", None),
]


def load_error(tmp_path: Path, table: str) -> ConfigError:
    """The error of loading the project, settings and build options, with the table given."""
    write_pyproject(tmp_path, table)
    with pytest.raises(ConfigError) as info:
        Project.load(tmp_path, environ={})
    return info.value


@pytest.mark.parametrize("key, table, message", [pytest.param(*case, id=case[0]) for case in WRONG_TYPES])
def test_a_wrong_type_names_key_value_and_form(tmp_path, key, table, message):
    error = load_error(tmp_path, table)
    assert error.message == message
    assert str(tmp_path / "pyproject.toml") in error.hint


@pytest.mark.parametrize("table, message, hint", [pytest.param(*case[1:], id=case[0]) for case in MALFORMED])
def test_a_malformed_entry_names_key_value_and_form(tmp_path, table, message, hint):
    error = load_error(tmp_path, table)
    assert error.message == message
    assert hint is None or hint in error.hint
    assert str(tmp_path / "pyproject.toml") in error.hint


def test_settings_alone_reject_their_keys(tmp_path):
    """load_settings checks its own keys; the build options wait for load_options."""
    write_pyproject(tmp_path, 'scripts = [{ name = "x" }]\nmax-jobs = "many"')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, option_keys())
    assert info.value.message == "[tool.buildkit] scripts[0] lacks the required key `target`: {'name': 'x'}."


def test_option_keys_are_unknown_without_the_option_reader(tmp_path):
    write_pyproject(tmp_path, "max-jobs = 2")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    assert info.value.message == "Unknown key `max-jobs` in [tool.buildkit]."


def test_a_table_that_is_not_a_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool]\nbuildkit = 1\n')
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    assert info.value.message == f"[tool.buildkit] in {tmp_path / 'pyproject.toml'} must be a table, not 1."


def test_every_declared_key_has_a_wrong_type_case():
    declared = {row.key for row in SETTINGS} | set(option_keys())
    declared |= {f"{row.key}.{sub.key}" for row in SETTINGS if row.table for sub in describe(row.table)}
    covered = {key for key, _, _ in WRONG_TYPES}
    assert declared - covered == set(), "add a wrong-type case for each new key"
    assert covered - declared == set(), "a case names a key that is not declared"


def test_the_command_line_reports_it_without_a_traceback(tmp_path, capsys):
    write_pyproject(tmp_path, 'optional-packages = [{ package = 1, when = "X" }]')
    assert cli_main(["options", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    output = captured.err + captured.out
    assert "Traceback" not in output
    assert "optional-packages[0].package" in output
