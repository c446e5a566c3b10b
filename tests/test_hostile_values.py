"""Every [tool.buildkit] key and every environment option, given a NUL, a line break, a
1 MB value, an empty value or a value of the wrong type, is one ConfigError naming it (or
is accepted): never another exception, never a value CMake would cut or a command line
could not hold (buildkit/config/parsing.py's check_text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildkit.config.options import load_options, option_keys, option_table
from buildkit.config.settings import SETTINGS, load_settings
from buildkit.errors import ConfigError
from buildkit.frontends.cli.main import main as cli_main
from buildkit_testing.projects import write_file, write_pyproject

BAD_STRINGS = {"nul": "a\0b", "newline": "a\nb", "1MB": "x" * (1 << 20), "empty": ""}
# How check_text names each problem.
SAYS = {"nul": "contains a NUL character", "newline": "contains a line break", "1MB": "bytes long"}


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string with \u escapes is a TOML basic string


def value_forms(value: str) -> list[str]:
    """The value as each shape a key may take: a string, a list, a table, a list of tables."""
    text = toml_string(value)
    return [text, f"[{text}]", f"{{ x = {text} }}", f"[{{ x = {text} }}]"]


def load(tmp_path: Path, table: str, environ: dict[str, str] | None = None) -> None:
    write_file(tmp_path / "demo" / "__init__.py", "")
    write_pyproject(tmp_path, table)
    load_options(load_settings(tmp_path, option_keys()), environ=environ or {})


KEYS = sorted({row.key for row in SETTINGS})


@pytest.mark.parametrize("bad", sorted(BAD_STRINGS))
@pytest.mark.parametrize("key", KEYS)
def test_every_key_refuses_a_hostile_value_by_name(tmp_path: Path, key: str, bad: str) -> None:
    for form in [*value_forms(BAD_STRINGS[bad]), "12", "true", "{ }"]:
        try:
            load(tmp_path, f"{key} = {form}")
        except ConfigError as error:
            assert key in str(error), (form[:80], str(error))
        # Anything else (a traceback) fails the test; an accepted value is fine for an empty string.
        else:
            assert bad == "empty" or form in ("12", "true", "{ }") or not any(c in form for c in "\\x"), \
                f"{key} = {form[:80]} was accepted"


@pytest.mark.parametrize("table, bad", [
    ('cmake-defines = { FOO = "a\\u0000b" }', "nul"),
    ('cmake-defines = { FOO = "a\\nb" }', "newline"),
    (f'cmake-defines = {{ FOO = "{"x" * 70_000}" }}', "1MB"),
    ('build-dir = "build\\u0000x"', "nul"),
    ('build-dir = "build\\nx"', "newline"),
    ('version-file = "version\\u0000.txt"', "nul"),
    ('package = "demo\\n"', "newline"),
    ('max-jobs = "4\\n"', "newline"),
])
def test_the_reason_is_named(tmp_path: Path, table: str, bad: str) -> None:
    with pytest.raises(ConfigError, match=SAYS[bad]):
        load(tmp_path, table)


@pytest.mark.parametrize("option", [o.env for o in option_table() if o.env and "<PREFIX>" not in o.env])
def test_every_environment_option_refuses_a_huge_value_and_a_nul_setting(tmp_path: Path, option: str) -> None:
    with pytest.raises(ConfigError, match=f"{option}.*bytes long"):
        load(tmp_path, "", environ={option: "1" * (1 << 20)})
    # The environment cannot hold a NUL; a config setting (pip -C) can.
    write_pyproject(tmp_path)
    with pytest.raises(ConfigError, match=f"{option}.*NUL"):
        load_options(load_settings(tmp_path, option_keys()), environ={}, config_settings={option: "1\x002"})
    for value in ("", "a\nb"):
        try:
            load(tmp_path, "", environ={option: value})
        except ConfigError as error:
            assert option in str(error), str(error)


@pytest.mark.parametrize("variable", ["BUILD_FOO", "USE_BAR", "CMAKE_CXX_FLAGS_INIT"])
def test_a_forwarded_define_with_a_line_break_is_refused(tmp_path: Path, variable: str) -> None:
    with pytest.raises(ConfigError, match=f"-D{variable} .*line break"):
        load(tmp_path, "", environ={variable: "on\nDROPPED=1"})


def test_the_command_line_shows_one_boxed_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_file(tmp_path / "demo" / "__init__.py", "")
    write_pyproject(tmp_path, 'cmake-defines = { FOO = "a\\u0000b" }')
    assert cli_main(["options", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "NUL character" in err and "Traceback" not in err, err
