"""One reading of a switch: every spelling of ``VERBOSE`` means the same to the strict
option parser, the console and the no-op develop (which hands a run it cannot answer
quietly to the full command, where a refused word is named)."""

from __future__ import annotations

import pytest

from buildkit._util import console
from buildkit._util.switches import FALSE_WORDS, TRUE_WORDS
from buildkit.config.options import load_options
from buildkit.errors import ConfigError
from buildkit.frontends import noop_develop

ACCEPTED = [(word, True) for word in TRUE_WORDS] + [(word, False) for word in FALSE_WORDS] + [
    ("ON", True), (" Yes ", True), ("Off", False), ("FALSE", False)]
REFUSED = ["banana", "2", "-1", "verbose", "0n"]


@pytest.mark.parametrize("word, on", ACCEPTED)
def test_every_reader_agrees_on_an_accepted_spelling(monkeypatch: pytest.MonkeyPatch, word: str, on: bool) -> None:
    monkeypatch.setenv("VERBOSE", word)
    assert load_options(None, environ={"VERBOSE": word}).verbose is on
    assert console.is_verbose() is on
    # A verbose run shows every decision, so only a quiet one is answered by the no-op.
    assert (noop_develop.request(["develop"]) is None) is on
    assert (noop_develop.setup_py_request(["develop"], __file__) is None)  # not a setup.py: never answered


@pytest.mark.parametrize("word", REFUSED)
def test_a_refused_spelling_is_named_and_never_taken_for_off(monkeypatch: pytest.MonkeyPatch, word: str) -> None:
    monkeypatch.setenv("VERBOSE", word)
    with pytest.raises(ConfigError, match="VERBOSE"):
        load_options(None, environ={"VERBOSE": word})
    assert noop_develop.request(["develop"]) is None  # the full command loads the options and names it
    assert console.is_verbose() is False
