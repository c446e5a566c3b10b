"""The configuration reference in docs/ is generated from the code's tables."""

from buildkit.config.options import option_table
from buildkit.config.settings import SETTINGS
from buildkit.frontends.cli.docs import render_reference
from buildkit_testing.paths import REPO

DOC = REPO / "docs" / "configuration.md"


def test_configuration_reference_matches_the_code():
    assert DOC.read_text(encoding="utf-8") == render_reference(), "run `buildkit docs` to regenerate"


def test_every_variable_and_key_is_documented():
    text = DOC.read_text(encoding="utf-8")
    for option in option_table():
        assert f"`{option.env}`" in text
    for setting in SETTINGS:
        assert f"`{setting.key}`" in text
