"""[tool.buildkit] validation: unknown keys and wrong types are errors naming the key."""

from __future__ import annotations

import pytest

from buildkit.config.options import option_keys
from buildkit.config.settings import SETTINGS, load_settings
from buildkit.errors import ConfigError


def load(tmp_path, table: str, project: str = '[project]\nname = "my-proj"\n'):
    (tmp_path / "pyproject.toml").write_text(project + "\n[tool.buildkit]\n" + table)
    return load_settings(tmp_path, option_keys())


def test_defaults_are_derived_from_the_project_name(tmp_path):
    settings = load(tmp_path, "")
    assert settings.package == "my_proj"
    assert settings.env_prefix == "MY_PROJ"
    assert settings["library-distribution"] == "libmy-proj"
    assert settings.build_dir == (tmp_path / "build").resolve()


def test_unknown_key_is_named(tmp_path):
    with pytest.raises(ConfigError) as info:
        load(tmp_path, 'buid-dir = "b"\n')
    assert "`buid-dir`" in str(info.value) and "build-dir" in str(info.value)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.key)
def test_every_key_rejects_a_wrong_type(tmp_path, setting):
    bad = "12" if setting.kind != "positive integer" else '"lots"'
    with pytest.raises(ConfigError) as info:
        load(tmp_path, f"{setting.key} = {bad}\n")
    assert f"`{setting.key}`" in str(info.value)


def test_option_keys_with_wrong_type_are_named(tmp_path):
    from buildkit.config.options import load_options

    settings = load(tmp_path, "max-jobs = [1]\n")
    with pytest.raises(ConfigError, match="max-jobs"):
        load_options(settings, {})


def test_malformed_toml_and_missing_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project\nname=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.buildkit]\n")
    with pytest.raises(ConfigError, match="no \\[project\\] name"):
        load_settings(tmp_path)
    with pytest.raises(ConfigError, match="No pyproject.toml"):
        load_settings(tmp_path / "missing")
