"""One reading per knob: every boolean environment option, in every spelling the strict
parser accepts or refuses, means the same to each other reader of its variable.

The options (``config/options.py``) read each variable once, strictly.  A few readers
run before the options load or where an error cannot be raised: the console's
``VERBOSE``, the no-op develop's switches and an editable install's import hook.  Each
goes through ``_util/switches.py``, which has the strict parser's words; this test holds
them to its verdicts.  A refused word is an error from the strict parser: the no-op
hands such a run to the full command (which names it), the console stays quiet until
then, and the import hook stops the import with the strict parser's message.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import buildkit
from buildkit import editable_rebuild
from buildkit._util import console
from buildkit._util.switches import FALSE_WORDS, TRUE_WORDS
from buildkit.config.modes import CudaToolkit
from buildkit.config.options import load_options, option_table, parse_bool
from buildkit.errors import ConfigError
from buildkit.frontends import noop_develop

BOOLEANS = {option.env: option for option in option_table() if option.parse is parse_bool}


def _spellings(word: str) -> set[str]:
    return {word, word.upper(), word.title(), f"  {word}\t", f"\n{word} "}


ACCEPTED = sorted({(spelling, on) for words, on in ((TRUE_WORDS, True), (FALSE_WORDS, False))
                   for word in words for spelling in _spellings(word)})
REFUSED = ["banana", "2", "-1", "0n", "truee", "yes please", "none"]


@dataclass(frozen=True)
class Reader:
    """A reader of a knob other than the options: whether it takes the knob as on."""

    name: str
    module: str  # the module that names the variable, relative to the repository
    takes_as_on: Callable[[Path], bool]
    on_a_refused_word: bool  # what it does with a word the strict parser refuses


def _setup_py(tmp_path: Path) -> str:
    script = tmp_path / "setup.py"
    script.write_text("")
    return str(script)


# A no-op reader is on when it hands the run to the full command: it answers only a switch that is off.
NOOP_READERS = [
    Reader("buildkit develop's no-op", "buildkit/frontends/noop_develop.py",
           lambda _: noop_develop.request(["develop"]) is None, on_a_refused_word=True),
    Reader("setup.py develop's no-op", "buildkit/frontends/noop_develop.py",
           lambda tmp: noop_develop.setup_py_request(["develop"], _setup_py(tmp)) is None, on_a_refused_word=True),
]


def _import_hook_reading(variable: str) -> bool:
    """Whether an editable install's import hook takes ``variable`` as on; a refused word stops
    the import with the strict parser's own message, counted as on (it is not read as off)."""
    try:
        return editable_rebuild._switch(variable, default=False, name="pkg")
    except editable_rebuild.RebuildOnImportError as refused:
        assert str(refused).startswith(f"pkg was not rebuilt before its import: {variable}=") and \
            "is not a boolean." in str(refused)
        return True


def _import_hook(variable: str) -> list[Reader]:
    return [Reader("an editable install's import hook", "buildkit/_util/switches.py",
                   lambda _: _import_hook_reading(variable), on_a_refused_word=True)]


READERS: dict[str, list[Reader]] = {
    "VERBOSE": [Reader("the console", "buildkit/_util/switches.py", lambda _: console.is_verbose(),
                       on_a_refused_word=False), *NOOP_READERS],
    # A quiet no-op would skip the configure from scratch, or build when only a configure was asked for.
    "CMAKE_FRESH": NOOP_READERS,
    "CMAKE_ONLY": NOOP_READERS,
    "BUILDKIT_EDITABLE_REBUILD": _import_hook("BUILDKIT_EDITABLE_REBUILD"),
    "BUILDKIT_EDITABLE_VERBOSE": _import_hook("BUILDKIT_EDITABLE_VERBOSE"),
}

# Modules that name a knob's variable without reading it.
NAMED_ONLY = {
    "buildkit/config/options.py": "the declarations",
    "buildkit/config/settings.py": "the default names of the wheel-mode variables",
    "buildkit/builder/toolchain/linker_script.py": "its messages",
    "buildkit/builder/configure/arguments.py": "the CMake variable BUILDKIT_TORCH_PCH it passes the option as",
}


@pytest.fixture(autouse=True)
def _no_knob_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [*BOOLEANS, "CI"]:
        monkeypatch.delenv(name, raising=False)


def _strict(name: str, word: str) -> bool:
    option = BOOLEANS[name]
    value = getattr(load_options(None, environ={name: word}), option.field)
    assert isinstance(value, bool)
    return value


def test_the_knobs_are_the_declared_boolean_options() -> None:
    assert {"VERBOSE", "CMAKE_FRESH", "CMAKE_ONLY", "DEBUG", "USE_NINJA"} <= set(BOOLEANS)
    assert set(READERS) <= set(BOOLEANS), "a reader of a switch that is no boolean option"
    assert set(noop_develop.HANDED_OVER) == {name for name, readers in READERS.items() if NOOP_READERS[0] in readers}


@pytest.mark.parametrize("name", sorted(BOOLEANS))
def test_every_reader_agrees_on_each_accepted_spelling(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                       name: str) -> None:
    for word, on in ACCEPTED:
        assert _strict(name, word) is on, f"{name}={word!r}"
        monkeypatch.setenv(name, word)
        for reader in READERS.get(name, []):
            assert reader.takes_as_on(tmp_path) is on, f"{reader.name} reads {name}={word!r} otherwise"


@pytest.mark.parametrize("name", sorted(BOOLEANS))
def test_a_refused_spelling_is_one_paragraph_from_the_strict_parser(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path, name: str) -> None:
    for word in REFUSED:
        with pytest.raises(ConfigError) as refused:
            load_options(None, environ={name: word})
        error = refused.value
        assert error.message == f"{name}={word!r} is not a boolean."
        assert error.hint and "\n" not in error.hint and all(w in error.hint for w in TRUE_WORDS)
        monkeypatch.setenv(name, word)
        for reader in READERS.get(name, []):
            assert reader.takes_as_on(tmp_path) is reader.on_a_refused_word, f"{reader.name} on {name}={word!r}"


def test_every_module_that_names_a_knob_is_a_known_reader() -> None:
    """A new reader of a knob (a string constant naming its variable) must be listed above."""
    root = Path(buildkit.__file__).parent.parent
    known = {(reader.module, name) for name, readers in READERS.items() for reader in readers}
    unknown = []
    for path in sorted((root / "buildkit").rglob("*.py")):
        module = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in BOOLEANS and module not in NAMED_ONLY \
                    and (module, node.value) not in known:
                unknown.append(f"{module}:{node.lineno} {node.value}")
    assert not unknown


def test_ci_is_read_with_the_switches_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """``CI`` is no option (CI systems set it), but the console reads it with the same words."""
    for name in ("NO_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    for word, on in ACCEPTED:
        monkeypatch.setenv("CI", word)
        assert console.is_interactive() is not on, f"CI={word!r}"


def test_the_cuda_toolkit_knob_has_one_reading() -> None:
    """BUILDKIT_CUDA_TOOLKIT, a config setting and `cuda-toolkit` in [tool.buildkit] go through one
    parser: any case and surrounding blanks, and anything else refused by name."""
    for word, toolkit in (("wheel", CudaToolkit.WHEEL), (" System\t", CudaToolkit.SYSTEM), ("AUTO", CudaToolkit.AUTO)):
        assert load_options(None, environ={"BUILDKIT_CUDA_TOOLKIT": word}).cuda_toolkit is toolkit
        assert load_options(None, {}, {"cuda-toolkit": word}).cuda_toolkit is toolkit
    assert load_options(None, environ={}).cuda_toolkit is CudaToolkit.AUTO
    for word in ("conda", "", "wheels", "none"):
        with pytest.raises(ConfigError) as refused:
            load_options(None, environ={"BUILDKIT_CUDA_TOOLKIT": word})
        assert refused.value.message == f"BUILDKIT_CUDA_TOOLKIT={word!r} is not a CUDA toolkit source."
        assert refused.value.hint and all(f"`{w}`" in refused.value.hint for w in ("wheel", "system", "auto"))
