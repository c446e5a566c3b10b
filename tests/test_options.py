"""Build options: the strict parser, precedence, forwarding and the bad-value table."""

from __future__ import annotations

import dataclasses

import pytest

from buildkit.config.invocation import Invocation
from buildkit.config.modes import WheelMode
from buildkit.config.options import (
    FALSE_WORDS,
    TRUE_WORDS,
    BuildOptions,
    load_options,
    merged_prefix_path,
    option_keys,
    option_table,
    parse_bool,
)
from buildkit.config.settings import load_settings
from buildkit.errors import ConfigError, ModeConflictError
from buildkit.frontends import handoff
from buildkit.frontends.setuptools.flow import setup_py_invocation
from buildkit_testing.projects import write_pyproject


def write_project(tmp_path, table: str = ""):
    return load_settings(write_pyproject(tmp_path, table), option_keys())


@pytest.mark.parametrize("word", [*TRUE_WORDS, "ON", "Yes", "TRUE", " Enabled "])
def test_true_words(word):
    assert parse_bool(word, "X") is True


@pytest.mark.parametrize("word", [*FALSE_WORDS, "OFF", "No", "FALSE", "Disabled"])
def test_false_words(word):
    assert parse_bool(word, "X") is False


@pytest.mark.parametrize("word", ["2", "maybe", "found", "notfound", "onn", "-1", "truee"])
def test_unknown_words_are_errors_naming_variable_and_value(word):
    with pytest.raises(ConfigError) as info:
        parse_bool(word, "USE_THING")
    text = str(info.value)
    assert "USE_THING" in text and repr(word) in text and "yes" in text and "off" in text


# One bad value per interpreted variable, driven by the option table itself: a
# new option without an entry here fails this test.
BAD_VALUES = {
    "boolean": "perhaps",
    "positive integer": "0",
    "build type": "Fastest",
    "string": "",
    "arguments": "-DFOO='unterminated",
    "path": "",
    "program": " ",
    "version": "",
    "requirements": "numpy>>1",
    "architecture list": "",
    "integer": "yesterday",
    "one of `wheel`, `system` or `auto`": "conda",
    "one of `none` or `sccache`": "distcc",
}
ALWAYS_VALID_KINDS = {"flags", "path list"}


@pytest.mark.parametrize("option", [o for o in option_table() if o.kind not in ALWAYS_VALID_KINDS],
                         ids=lambda o: o.env)
def test_every_interpreted_variable_rejects_a_bad_value_by_name(tmp_path, option):
    settings = write_project(tmp_path)
    env_name = option.env.replace("<PREFIX>", settings.env_prefix)
    with pytest.raises(ConfigError) as info:
        load_options(settings, {env_name: BAD_VALUES[option.kind]})
    assert env_name in str(info.value)


def test_the_option_table_is_the_declared_fields():
    """Each option is declared once, on its BuildOptions field; the table reads those."""
    table = option_table()
    declared = [f for f in dataclasses.fields(BuildOptions) if f.metadata]
    assert [o.field for o in table] == [f.name for f in declared]
    assert [o.default for o in table] == [f.default for f in declared]
    assert {o.key for o in table if o.key} == option_keys() == {
        "build-type", "max-jobs", "use-ninja", "generator", "verbose", "compiler-launcher", "cuda-arch-list",
            "develop-cuda-arch-list", "library-only", "editable-rebuild", "editable-verbose",
            "torch-precompiled-headers", "cuda-toolkit", "dist"}
    assert len({o.env for o in table}) == len(table)


def test_project_named_variables_come_from_the_settings(tmp_path):
    envs = {o.field: o.env for o in option_table()}
    assert (envs["project_build_version"], envs["library_only"], envs["python_only"]) == (
        "<PREFIX>_BUILD_VERSION", "BUILD_LIBTORCH_WHL", "BUILD_PYTHON_ONLY")
    settings = write_project(tmp_path, 'env-prefix = "TLT"\nlibrary-only-variable = "LIB_ONLY"')
    envs = {o.field: o.env for o in option_table(settings)}
    assert (envs["cuda_arch_list"], envs["library_only"], envs["python_only"]) == (
        "TLT_CUDA_ARCH_LIST", "LIB_ONLY", "BUILD_PYTHON_ONLY")
    assert load_options(settings, {}).variable_names["project_build_number"] == "TLT_BUILD_NUMBER"


@pytest.mark.parametrize("value", ["-5", "abc", "100000", "1.5"])
def test_absurd_job_counts(value):
    with pytest.raises(ConfigError, match="MAX_JOBS"):
        load_options(None, {"MAX_JOBS": value})


def test_build_type_precedence_and_cache_reuse():
    assert load_options(None, {}).resolve_build_type(None) == "Release"
    assert load_options(None, {}).resolve_build_type("Debug") == "Debug"  # cache kept
    assert load_options(None, {"REL_WITH_DEB_INFO": "1"}).resolve_build_type("Debug") == "RelWithDebInfo"
    both = load_options(None, {"DEBUG": "1", "REL_WITH_DEB_INFO": "1"})
    assert both.resolve_build_type("Release") == "Debug"
    winner = load_options(None, {"DEBUG": "1", "CMAKE_BUILD_TYPE": "minsizerel"})
    assert winner.resolve_build_type("Debug") == "MinSizeRel"


def test_toml_build_type_is_a_default_below_the_cache(tmp_path):
    settings = write_project(tmp_path, 'build-type = "RelWithDebInfo"')
    options = load_options(settings, {})
    assert options.resolve_build_type(None) == "RelWithDebInfo"
    assert options.resolve_build_type("Debug") == "Debug"
    assert load_options(settings, {"CMAKE_BUILD_TYPE": "Release"}).resolve_build_type("Debug") == "Release"


def test_precedence_config_settings_over_environment_over_toml_over_default(tmp_path):
    settings = write_project(tmp_path, "max-jobs = 2\ncmake-defines = { USE_X = true, USE_Y = \"toml\" }")
    assert load_options(settings, {}).max_jobs == 2
    assert load_options(settings, {"MAX_JOBS": "3"}).max_jobs == 3
    top = load_options(settings, {"MAX_JOBS": "3", "USE_Y": "env"}, {"MAX_JOBS": "5", "USE_Y": "cs"})
    assert top.max_jobs == 5 and top.sources["max_jobs"] == "config setting"
    assert top.defines() == {"USE_X": "ON", "USE_Y": "cs"}
    assert load_options(settings, {"USE_Y": "env"}).defines()["USE_Y"] == "env"
    assert load_options(settings, {}, {"max-jobs": "7"}).max_jobs == 7  # toml key as a config setting
    assert load_options(None, {}).max_jobs is None


def test_forwarding_is_verbatim_and_skips_switches_and_cmake_environment(tmp_path):
    settings = write_project(tmp_path, 'cmake-forward = ["BLAS"]')
    env = {
        "USE_FOO": "1; touch /tmp/pwned", "BUILD_TEST": "0", "CMAKE_CUDA_COMPILER": "/x/nvcc",
        "BLAS": "OpenBLAS", "HAVE_X_EXITCODE": "0", "USE_NINJA": "1", "CMAKE_FRESH": "0",
        "CMAKE_ONLY": "0", "BUILD_LIBTORCH_WHL": "0", "BUILD_PYTHON_ONLY": "0",
        "CMAKE_GENERATOR": "Ninja", "CMAKE_BUILD_PARALLEL_LEVEL": "2", "CMAKE_TOOLCHAIN_FILE": "/t.cmake",
        "CMAKE_ARGS": "-DQ='a b' -Wno-dev", "CUDA_HOST_COMPILER": "/usr/bin/g++", "PATH": "/bin",
        "USE_PRIORITIZED_TEXT_FOR_LD": "0", "CMAKE_BUILD_TYPE": "Debug", "UNRELATED": "x",
    }
    options = load_options(settings, env)
    assert options.defines() == {
        "USE_FOO": "1; touch /tmp/pwned", "BUILD_TEST": "0", "CMAKE_CUDA_COMPILER": "/x/nvcc",
        "BLAS": "OpenBLAS", "HAVE_X_EXITCODE": "0", "CMAKE_CUDA_HOST_COMPILER": "/usr/bin/g++",
    }
    assert options.cmake_args == ("-DQ=a b", "-Wno-dev")
    assert dict(options.cmake_environment) == {
        "CMAKE_GENERATOR": "Ninja", "CMAKE_BUILD_PARALLEL_LEVEL": "2", "CMAKE_TOOLCHAIN_FILE": "/t.cmake"}
    assert options.jobs == 2 and options.cmake_generator == "Ninja"


@pytest.mark.parametrize(("config", "named", "hint"), [
    ({"zmq.prefix": "/opt/zmq"}, "setting zmq.prefix", "list zmq.prefix in [tool.buildkit] cmake-forward"),
    ({"cmake.define.ZMQ_PREFIX": "/z"}, "setting cmake.define.ZMQ_PREFIX", "here: `-C ZMQ_PREFIX=...`"),
    ({"MAX_JOB": "3"}, "setting MAX_JOB", "Did you mean `MAX_JOBS`"),
    ({"ZMQ_PREFX": "/z", "zmq": "x"}, "settings ZMQ_PREFX, zmq", "Did you mean `ZMQ_PREFIX`"),
])
def test_a_config_setting_nothing_reads_is_refused(tmp_path, config, named, hint):
    """It would change nothing, silently (scikit-build-core's `-C cmake.define.X=...` after a port)."""
    settings = write_project(tmp_path, 'cmake-forward = ["ZMQ_PREFIX"]')
    with pytest.raises(ConfigError) as error:
        load_options(settings, {}, config)
    assert f"Config {named}: not a build option" in str(error.value)
    assert hint in error.value.hint
    # What is read passes: an option's variable and key, a forwarded variable, a cmake-forward name.
    options = load_options(settings, {}, {"MAX_JOBS": "2", "build-type": "Debug", "USE_X": "1", "ZMQ_PREFIX": "/z"})
    assert options.defines() == {"USE_X": "1", "ZMQ_PREFIX": "/z"}


def test_renamed_mode_variables(tmp_path):
    settings = write_project(tmp_path,
                             'library-only-variable = "BUILD_LIB_ONLY"\npython-only-variable = "BUILD_PY_ONLY"')
    assert load_options(settings, {"BUILD_LIB_ONLY": "1"}).wheel_mode is WheelMode.LIBRARY_ONLY
    assert load_options(settings, {"BUILD_PY_ONLY": "on"}).wheel_mode is WheelMode.PYTHON_ONLY
    # The default names are ordinary forwarded variables for this project.
    assert load_options(settings, {"BUILD_LIBTORCH_WHL": "1"}).wheel_mode is WheelMode.FULL
    with pytest.raises(ModeConflictError) as info:
        load_options(settings, {"BUILD_LIB_ONLY": "1", "BUILD_PY_ONLY": "1"})
    assert "BUILD_LIB_ONLY" in str(info.value) and "BUILD_PY_ONLY" in str(info.value) and "to 0" in str(info.value)


def test_mode_conflict_names_both_variables():
    with pytest.raises(ModeConflictError) as info:
        load_options(None, {"BUILD_LIBTORCH_WHL": "1", "BUILD_PYTHON_ONLY": "yes"})
    message = str(info.value)
    assert "BUILD_LIBTORCH_WHL" in message and "BUILD_PYTHON_ONLY" in message and "Set one of them to 0" in message


@pytest.mark.parametrize("layer", ["environment", "config setting"])
def test_reserved_install_prefix_is_refused(layer):
    prefix = {"CMAKE_INSTALL_PREFIX": "/opt"}
    env, cs = (prefix, None) if layer == "environment" else ({}, prefix)
    with pytest.raises(ConfigError, match="CMAKE_INSTALL_PREFIX.*package tree"):
        load_options(None, env, cs)


@pytest.mark.parametrize(("table", "environ", "config", "named"), [
    ('cmake-defines = { CMAKE_INSTALL_PREFIX = "/opt" }', {}, None,
     "CMAKE_INSTALL_PREFIX is set in [tool.buildkit] cmake-defines"),
    ('cmake-defines = { "CMAKE_INSTALL_PREFIX:PATH" = "/opt" }', {}, None,
     "CMAKE_INSTALL_PREFIX:PATH is set in [tool.buildkit] cmake-defines"),
    ("", {"CMAKE_INSTALL_PREFIX:PATH": "/opt"}, None, "CMAKE_INSTALL_PREFIX:PATH is set in the environment"),
    ("", {}, {"CMAKE_INSTALL_PREFIX:PATH": "/opt"}, "CMAKE_INSTALL_PREFIX:PATH is set in the config settings"),
    ('cmake-aliases = { OPT_PREFIX = "CMAKE_INSTALL_PREFIX" }', {"OPT_PREFIX": "/opt"}, None,
     "CMAKE_INSTALL_PREFIX is set in the environment"),
    ("", {"CMAKE_ARGS": "-DCMAKE_INSTALL_PREFIX=/opt"}, None, "-DCMAKE_INSTALL_PREFIX=/opt is set in CMAKE_ARGS"),
    ("", {"CMAKE_ARGS": "-G Ninja -DCMAKE_INSTALL_PREFIX:PATH=/opt"}, None,
     "-DCMAKE_INSTALL_PREFIX:PATH=/opt is set in CMAKE_ARGS (environment)"),
    ("", {"CMAKE_ARGS": "-D CMAKE_INSTALL_PREFIX=/opt"}, None, "-D CMAKE_INSTALL_PREFIX=/opt is set in CMAKE_ARGS"),
    ("", {}, {"CMAKE_ARGS": "--install-prefix /opt"}, "--install-prefix is set in CMAKE_ARGS (config setting)"),
    ("", {"CMAKE_ARGS": "--install-prefix=/opt"}, None, "--install-prefix=/opt is set in CMAKE_ARGS"),
    ("", {"DESTDIR": "/stage"}, None, "DESTDIR=/stage is set in the environment"),
])
def test_install_prefix_is_refused_in_every_spelling(tmp_path, table, environ, config, named):
    settings = write_project(tmp_path, table)
    with pytest.raises(ConfigError) as info:
        load_options(settings, environ, config)
    assert named in info.value.message and "buildkit sets the install prefix itself" in info.value.message
    assert "build a wheel and install that" in info.value.hint


@pytest.mark.parametrize("arguments", ["-DCMAKE_INSTALL_PREFIXES=/opt", "-DMY_CMAKE_INSTALL_PREFIX=/opt",
                                       "-D CMAKE_INSTALL_LIBDIR=lib64", "-DCMAKE_INSTALL_PREFIX_FOO:PATH=/opt"])
def test_names_that_only_look_like_the_install_prefix_pass(arguments):
    assert load_options(None, {"CMAKE_ARGS": arguments}).cmake_args


def test_prefix_path_is_merged_without_repeats():
    options = load_options(None, {"CMAKE_PREFIX_PATH": "/user/a:/site;/user/b"})
    assert merged_prefix_path(options, ["/site", "/lib"]) == "/site;/lib;/user/a;/user/b"


def test_project_named_variables(tmp_path):
    settings = write_project(tmp_path, 'env-prefix = "TLT"')
    options = load_options(settings, {"TLT_BUILD_VERSION": "2.0.0", "TLT_BUILD_NUMBER": "3",
                                      "TLT_EXTRA_INSTALL_REQUIREMENTS": "numpy>=1.24 | pyyaml|"})
    assert options.build_version == "2.0.0" and options.build_number == 3
    assert options.release_variable == "TLT_BUILD_VERSION"
    assert options.extra_requirements == ("numpy>=1.24", "pyyaml")


def test_the_release_variable_is_buildkit_named(tmp_path):
    settings = write_project(tmp_path, 'env-prefix = "TLT"')
    options = load_options(settings, {"BUILDKIT_RELEASE_VERSION": "2.0.0", "BUILDKIT_BUILD_NUMBER": "2"})
    assert (options.build_version, options.build_number, options.release_variable) == (
        "2.0.0", 2, "BUILDKIT_RELEASE_VERSION")
    # Agreeing spellings are fine; disagreeing ones are refused by name.
    assert load_options(settings, {"BUILDKIT_RELEASE_VERSION": "2.0.0", "TLT_BUILD_VERSION": "2.0.0"}).build_version
    with pytest.raises(ConfigError, match="BUILDKIT_RELEASE_VERSION='2.0.0' and TLT_BUILD_VERSION='2.1.0' disagree"):
        load_options(settings, {"BUILDKIT_RELEASE_VERSION": "2.0.0", "TLT_BUILD_VERSION": "2.1.0"})


@pytest.mark.parametrize("package", ["cmake_example", "use_it", "build_tools"])
def test_a_project_named_release_variable_that_reads_as_a_cmake_variable_is_refused(tmp_path, package):
    """cmake_example's derived name is CMAKE_EXAMPLE_BUILD_VERSION: set, it is refused, never taken as
    the release or forwarded to CMake; BUILDKIT_RELEASE_VERSION is the name to use."""
    settings = write_project(tmp_path, f'package = "{package}"')
    variable = f"{package.upper()}_BUILD_VERSION"
    with pytest.raises(ConfigError, match=f"{variable} is set, but .* reads as a CMake variable.*"
                                          "Set BUILDKIT_RELEASE_VERSION instead"):
        load_options(settings, {variable: "1.0"})
    assert load_options(settings, {"BUILDKIT_RELEASE_VERSION": "1.0"}).build_version == "1.0"


def test_a_hooks_config_settings_reach_the_setup_it_runs_as_the_top_layer():
    """A PEP 517 hook parks its invocation; the setup.py it runs makes its own from it."""
    assert handoff.current_caller() is None
    with handoff.calling_setup(handoff.Caller(Invocation(("build_wheel",), {"DEBUG": "1"}))):
        caller = handoff.current_caller()
        assert caller is not None
        invocation = setup_py_invocation(["bdist_wheel"], caller.invocation.config_settings)
        assert invocation.builds and invocation.staged and not invocation.for_sdist
        assert load_options(None, {"DEBUG": "0"}, invocation.config_settings).resolve_build_type(None) == "Debug"
    assert handoff.current_caller() is None


@pytest.mark.parametrize(("arguments", "builds", "staged", "for_sdist", "editable_wheel"), [
    (["develop"], True, False, False, False),
    (["bdist_wheel"], True, True, False, False),
    (["build_ext", "--inplace"], True, False, False, False),
    (["sdist"], False, False, True, False),
    (["bdist_wheel", "--help"], False, True, False, False),
    (["egg_info"], False, False, False, False),
    # setuptools' build_editable hook: in place, for a wheel another environment may install
    (["editable_wheel", "--dist-info-dir", "/tmp/x"], True, False, False, True),
])
def test_what_a_setup_py_command_line_asks_for(arguments, builds, staged, for_sdist, editable_wheel):
    invocation = setup_py_invocation(arguments, {})
    assert (invocation.builds, invocation.staged, invocation.for_sdist, invocation.editable_wheel) == (
        builds, staged, for_sdist, editable_wheel)


def test_options_are_immutable_and_print_as_a_table():
    from rich.console import Console

    options = load_options(None, {"MAX_JOBS": "4", "USE_X": "1"})
    with pytest.raises(AttributeError):
        options.max_jobs = 3  # type: ignore[misc]
    console = Console(width=160, record=True)
    console.print(options)
    text = console.export_text()
    assert "MAX_JOBS" in text and "environment" in text and "USE_X" in text
