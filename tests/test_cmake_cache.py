"""CMakeCache against the real cmake.

Two oracles, both CMake itself:

* ``load_cache(<dir> READ_WITH_PREFIX "" <names>)`` in ``cmake -P``, which also
  evaluates ``if(<name>)`` for :meth:`CMakeCache.get_bool`;
* a configure over the cache, whose CMakeLists dumps every cache variable that
  ``cmCacheManager::LoadCache`` produced (name, TYPE, value) before ``project()``.

Names and values cross the CMake boundary hex-encoded (``string(HEX)``), so any
byte compares exactly.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from buildkit.builder.configure.cmake_cache import (
    CacheEntry,
    CMakeCache,
    CMakeCacheError,
    is_cmake_off,
    is_cmake_on,
    parse_entry,
)
from buildkit.errors import BuildkitError


def is_property_entry(entry: CacheEntry) -> bool:
    """An INTERNAL ``<name>-ADVANCED``/``-MODIFIED``/``-STRINGS`` line: CMake loads it
    as a property of ``<name>``, not as a variable."""
    return entry.type == "INTERNAL" and any(
        entry.name.endswith(suffix) and len(entry.name) > len(suffix) for suffix in ("-ADVANCED", "-MODIFIED", "-STRINGS"))


def _tool(name: str) -> str | None:
    local = Path(sys.executable).with_name(name)
    return str(local) if local.exists() else shutil.which(name)


CMAKE = _tool("cmake")
NINJA = _tool("ninja")
needs_cmake = pytest.mark.skipif(CMAKE is None, reason="cmake is not installed")

# Values CMake stores verbatim through set(CACHE) and has to read back.
STRING_VALUES = {
    "V_SEMI": "a;b;c", "V_EQ": "k=v=w", "V_COLON": "C:/x:y", "V_HASH": "#not a comment",
    "V_DQUOTE": 'say "hi"', "V_SQUOTE": "it's", "V_SQUOTED": "'wrapped'", "V_ONE_QUOTE": "'",
    "V_TWO_QUOTES": "''", "V_BSLASH": "C:\\path\\to\\x\\", "V_UNICODE": "ü€ 日本",
    "V_LEAD": "  leading", "V_TRAIL": "trailing  ", "V_TAB": "tab\t", "V_BOTH": "  both \t ",
    "V_BLANK": "   ", "V_EMPTY": "", "V_NEWLINE": "first\nsecond", "V_DOLLAR": "${NOT_EXPANDED}",
}
# Keys CMake writes quoted, or writes in a way it then misreads.
ODD_KEYS = {
    "A:B": "colon key", "//slash": "slash key", "A=B": "read back as A", 'Q"K': "inner quote",
    '"QS': "leading quote", "#hash_with_help": "kept", "#hash_without_help": "lost",
}
BOOL_VALUES = [
    "ON", "off", "Yes", "y", "n", "No", "TRUE", "false", "0", "1", "2", "-1", "0.0", "-0", "1e3",
    "0x0", "nan", "", "IGNORE", "ignore", "NOTFOUND", "notfound", "FOO-NOTFOUND", "foo-notfound",
    "-NOTFOUND", "NOTFOUND-", "random string", "TRUE ", "FALSE ", " OFF", "ü",
]
# if(<name>) looks at the name first when it is a constant or a number.
NAMED_LIKE_CONSTANTS = {
    "OFF": "ON", "Yes": "OFF", "0x10": "", "1e-999": "ON", "inf": "OFF", "nan": "", "-1.5": "",
    "2 ": "OFF", "notfound": "ON", "X-NOTFOUND": "ON", "1x": "OFF",
}
CLI_ARGS = [
    "-DKEY WITH SPACE:STRING=spaced key", "-DA(B):STRING=parens", "-DUNTYPED=untyped value",
    '-D"QUOTED:KEY":STRING=quoted key', "-DCLI_MIXED:STRING=a;b=c:d#e\"f'g\\h ü€  ",
    "-DCLI_PATH:PATH=/opt/x y", "-DCLI_BOOL:BOOL=yes",
]

DUMP_CACHE = """\
cmake_minimum_required(VERSION 3.20)
if(DEFINED BK_DUMP)
  get_property(_bk_names GLOBAL PROPERTY CACHE_VARIABLES)
  file(WRITE "${BK_DUMP}" "")
  foreach(_bk_n IN LISTS _bk_names)
    if(NOT _bk_n STREQUAL "")
      get_property(_bk_t CACHE "${_bk_n}" PROPERTY TYPE)
      get_property(_bk_v CACHE "${_bk_n}" PROPERTY VALUE)
      string(HEX "${_bk_n}" _bk_hn)
      string(HEX "${_bk_v}" _bk_hv)
      file(APPEND "${BK_DUMP}" "${_bk_hn} ${_bk_t} ${_bk_hv}\\n")
    endif()
  endforeach()
endif()
project(probe NONE)
"""

# Edge cases CMake never writes itself but reads from hand-edited caches.
HANDWRITTEN = (
    b"# comment\n   # indented comment\n\t\n\r\n"
    b"UNTYPED_LINE=x\n\"QUOTED UNTYPED\"=qu\nLOWER:bool=ON\nTYPE_SPACE:BOOL =1\n"
    b"UNKNOWN:FOOTYPE=f\nEQ_IN_TYPE:ST=RING=v\nCOLON_VALUE:STRING=a:b=c\n"
    b"   LEAD:STRING=  spaced  \t\r\nCRLF:STRING=crlf\r\nQ:STRING='q'\nQ1:STRING='\nQ2:STRING=''\n"
    b"\"OPEN:STRING=v\n\"OPEN2=w\n\"CLOSED:KEY\":PATH=/p\n"
    b"//help\n  AFTER_HELP:STRING=x\n//help\n#HASH_KEY:STRING=h\n"
    b"//help line 1\n//\\nhelp line 2\nMULTI_HELP:STRING=m\n"
    b"DUP:STRING=1\nDUP:BOOL=2\nNUL:STRING=a\0b\nWSV:STRING=   \nST:STATIC=s\nIN:INTERNAL=i\n"
    b"X:STRING=xv\nX-ADVANCED:INTERNAL=1\nUN:UNINITIALIZED=u\nBIN:STRING=\xff\xfe\xc3\n"
    b"LAST:FILEPATH=no newline at end"
)

ERROR_CASES = {
    "garbage": b"# c\nGOOD:STRING=1\ngarbage line without equals\nLATER:STRING=2\n",
    "quoted key without equals": b'GOOD:STRING=1\n"UNCLOSED:STRING\n',
    "help then blank line": b"//help\n\nGOOD:STRING=1\n",
    "help then indented help": b"//one\n  //two\nGOOD:STRING=1\n",
    "help at end of file": b"GOOD:STRING=1\n//help",
    "help then CRLF blank line": b"//help\r\n\r\nGOOD:STRING=1\r\n",
    "byte order mark": b"\xef\xbb\xbf# This is the CMakeCache file.\nGOOD:STRING=1\n",
}


def bracket(text: str) -> str:
    return f"[==[{text}]==]"


def raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def run_cmake(*args: str) -> subprocess.CompletedProcess[bytes]:
    assert CMAKE is not None
    return subprocess.run([CMAKE, *args], capture_output=True, timeout=120)


def configure(source: Path, build: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    generator = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={NINJA}"] if NINJA else []
    return run_cmake("-S", str(source), "-B", str(build), *generator, *args)


def project_source() -> str:
    cached = [("OPT_ON", "ON", "BOOL", "an option"), ("F_V", "/f/file", "FILEPATH", "a file"),
              ("P_V", "/p/dir", "PATH", "line one\nline two"), ("S_V", "static", "STATIC", ""),
              ("I_V", "internal", "INTERNAL", ""), ("B_TYPED", "yes", "BOOL", "")]
    cached += [(name, value, "STRING", f"help for {name}") for name, value in STRING_VALUES.items()]
    cached += [(name, value, "STRING", "" if name.endswith("without_help") else "help")
               for name, value in ODD_KEYS.items()]
    cached += [(f"BV_{i}", value, "STRING", "") for i, value in enumerate(BOOL_VALUES)]
    cached += [(name, value, "STRING", "") for name, value in NAMED_LIKE_CONSTANTS.items()]
    lines = [f"set({bracket(n)} {bracket(v)} CACHE {t} {bracket(d)})" for n, v, t, d in cached]
    return "\n".join([DUMP_CACHE, 'option(OPT_OFF "" OFF)',
                      "find_library(FOO_LIB nonexistent_lib_xyz)", *lines, ""])


def load_cache_script(build: Path, names: list[str], out: Path) -> str:
    """A cmake -P script: load_cache(READ_WITH_PREFIX) then one line per name."""
    lines = ["cmake_policy(VERSION 3.20)",
             f'load_cache({bracket(str(build))} READ_WITH_PREFIX "" {" ".join(map(bracket, names))})',
             f'file(WRITE {bracket(str(out))} "")']
    for name in names:
        lines += [f"set(_bk_n {bracket(name)})",
                  'get_directory_property(_bk_v DEFINITION "${_bk_n}")',
                  'string(HEX "${_bk_v}" _bk_h)',
                  "if(${_bk_n})", "  set(_bk_b 1)", "else()", "  set(_bk_b 0)", "endif()",
                  f'file(APPEND {bracket(str(out))} "${{_bk_h}} ${{_bk_b}}\\n")']
    return "\n".join(lines) + "\n"


def read_with_prefix(build: Path, names: list[str], tmp: Path) -> dict[str, tuple[bytes, bool]]:
    script, out = tmp / "read.cmake", tmp / "read.out"
    script.write_text(load_cache_script(build, names, out), encoding="utf-8")
    result = run_cmake("-P", str(script))
    assert result.returncode == 0, result.stderr.decode()
    rows = [line.split(" ") for line in out.read_text().splitlines()]
    return {name: (bytes.fromhex(h), b == "1") for name, (h, b) in zip(names, rows, strict=True)}


def parse_dump(path: Path) -> dict[str, tuple[str, bytes]]:
    rows = (line.split(" ") for line in path.read_text().splitlines())
    return {bytes.fromhex(n).decode("utf-8", "surrogateescape"): (t, bytes.fromhex(v))
            for n, t, v in rows}


def load_cache_dump(source: Path, build: Path, *args: str) -> dict[str, tuple[str, bytes]]:
    dump = build.parent / f"{build.name}.dump"
    result = configure(source, build, f"-DBK_DUMP={dump}", *args)
    assert result.returncode == 0, result.stderr.decode()
    return parse_dump(dump)


def write_dump_project(path: Path) -> Path:
    path.mkdir()
    (path / "CMakeLists.txt").write_text(DUMP_CACHE)
    return path


class Probe:
    """One configured cache, what buildkit parses from it and what CMake reads back."""

    def __init__(self, tmp: Path):
        source, self.build = tmp / "src", tmp / "build"
        source.mkdir()
        (source / "CMakeLists.txt").write_text(project_source(), encoding="utf-8")
        result = configure(source, self.build, *CLI_ARGS)
        assert result.returncode == 0, result.stderr.decode()
        self.text = (self.build / "CMakeCache.txt").read_bytes()
        self.cache = CMakeCache.read(self.build)
        self.read_back = read_with_prefix(self.build, list(self.cache), tmp)
        # Reconfiguring rewrites the cache, so this oracle runs last.
        self.loaded = load_cache_dump(source, self.build)
        self.loaded.pop("BK_DUMP")


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Probe:
    if CMAKE is None:
        pytest.skip("cmake is not installed")
    return Probe(tmp_path_factory.mktemp("cmake_cache"))


# --- against the real cmake -----------------------------------------------------------

@pytest.mark.slow
@needs_cmake
def test_values_match_load_cache_read_with_prefix(probe: Probe) -> None:
    assert len(probe.cache) > 80
    for name, entry in probe.cache.items():
        assert raw(entry.value) == probe.read_back[name][0], name


@pytest.mark.slow
@needs_cmake
def test_entries_match_what_cmake_loads(probe: Probe) -> None:
    ours = {name: (entry.type or "UNINITIALIZED", raw(entry.value))
            for name, entry in probe.cache.items() if not is_property_entry(entry)}
    assert ours == probe.loaded


@pytest.mark.slow
@needs_cmake
def test_get_bool_matches_if_for_every_entry(probe: Probe) -> None:
    for name in probe.cache:
        assert probe.cache.get_bool(name) == probe.read_back[name][1], name


@pytest.mark.slow
@needs_cmake
@pytest.mark.parametrize("index", range(len(BOOL_VALUES)), ids=[repr(v) for v in BOOL_VALUES])
def test_get_bool_of_value_matches_if(probe: Probe, index: int) -> None:
    name = f"BV_{index}"
    assert probe.cache[name].value == BOOL_VALUES[index]
    assert probe.cache.get_bool(name) == probe.read_back[name][1]


@pytest.mark.slow
@needs_cmake
@pytest.mark.parametrize("name", NAMED_LIKE_CONSTANTS)
def test_get_bool_of_constant_like_name_matches_if(probe: Probe, name: str) -> None:
    assert probe.cache.get_bool(name) == probe.read_back[name][1]


@pytest.mark.slow
@needs_cmake
def test_cmake_written_quirks(probe: Probe) -> None:
    cache = probe.cache
    assert cache["KEY WITH SPACE"] == CacheEntry("KEY WITH SPACE", "STRING", "spaced key")
    assert cache["A(B)"].value == "parens" and cache["QUOTED:KEY"].value == "quoted key"
    assert cache["A:B"].value == "colon key" and cache["//slash"].value == "slash key"
    assert cache["UNTYPED"] == CacheEntry("UNTYPED", "UNINITIALIZED", "untyped value")
    assert cache["S_V"].type == "STATIC" and cache["I_V"].type == "INTERNAL"
    assert cache["FOO_LIB"] == CacheEntry("FOO_LIB", "FILEPATH", "FOO_LIB-NOTFOUND")
    # CMake's own writer and reader disagree on these; buildkit sides with the reader.
    assert cache["A"] == CacheEntry("A", None, "B:STRING=read back as A") and "A=B" not in cache
    assert cache["V_SQUOTED"].value == "wrapped" and cache["V_TWO_QUOTES"].value == ""
    assert cache["V_NEWLINE"].value == "first"
    assert "#hash_with_help" in cache and "#hash_without_help" not in cache
    for name in ("V_LEAD", "V_TRAIL", "V_TAB", "V_BOTH", "V_BLANK", "V_UNICODE", "V_BSLASH"):
        assert cache[name].value == STRING_VALUES[name]


@pytest.mark.slow
@needs_cmake
def test_pytorch_dict_of_real_cache(probe: Probe) -> None:
    view = probe.cache.as_pytorch_dict()
    assert view["OPT_ON"] is True and view["OPT_OFF"] is False and view["CLI_BOOL"] is True
    assert view["FOO_LIB"] is None and view["F_V"] == "/f/file" and view["P_V"] == "/p/dir"
    assert view["UNTYPED"] == "untyped value" and view["V_EMPTY"] == ""
    assert not {"S_V", "I_V", "CMAKE_COMMAND", "CMAKE_PROJECT_NAME"} & view.keys()
    assert all(isinstance(v, (bool, str)) or v is None for v in view.values())


@pytest.mark.slow
@needs_cmake
def test_handwritten_cache_matches_what_cmake_loads(tmp_path: Path) -> None:
    source, build = write_dump_project(tmp_path / "src"), tmp_path / "build"
    build.mkdir()
    (build / "CMakeCache.txt").write_bytes(HANDWRITTEN)
    cache = CMakeCache.read(build)
    loaded = load_cache_dump(source, build)
    added_by_cmake = {n for n in loaded if n.startswith("CMAKE_") or n == "BK_DUMP"}
    assert {name: (entry.type or "UNINITIALIZED", raw(entry.value))
            for name, entry in cache.items() if not is_property_entry(entry)} == {
        name: row for name, row in loaded.items() if name not in added_by_cmake}
    assert cache["LEAD"].value == "  spaced" and cache["  AFTER_HELP"].value == "x"
    assert cache['"OPEN'].value == "v" and cache["UNKNOWN"].type == "STRING"
    assert cache["UNTYPED_LINE"].type is None and cache["BIN"].value == "\udcff\udcfe\udcc3"


@pytest.mark.slow
@needs_cmake
@pytest.mark.parametrize("text", ERROR_CASES.values(), ids=list(ERROR_CASES))
def test_parse_errors_match_cmake(tmp_path: Path, text: bytes) -> None:
    source, build = write_dump_project(tmp_path / "src"), tmp_path / "build"
    build.mkdir()
    (build / "CMakeCache.txt").write_bytes(text)
    with pytest.raises(CMakeCacheError) as caught:
        CMakeCache.read(build)  # before cmake, which saves a repaired cache even on error
    result = configure(source, build)
    match = re.search(rb"Parse error in cache file .* on line (\d+)\. Offending entry: (.*)",
                      result.stderr)
    assert result.returncode != 0 and match, result.stderr.decode()
    assert caught.value.lineno == int(match[1])
    assert raw(caught.value.line) == match[2]


# --- without cmake --------------------------------------------------------------------

@pytest.mark.parametrize(("line", "expected"), [
    ("K:STRING=v", ("K", "STRING", "v")),
    ('"K:Q":BOOL=ON', ("K:Q", "BOOL", "ON")),
    ("K=v", ("K", None, "v")),
    ('"K=Q"=v', ("K=Q", None, "v")),
    ("K:=v", ("K", "STRING", "v")),
    ("K:STRING=  v \t\r", ("K", "STRING", "  v")),
    ("K:STRING=' v '", ("K", "STRING", " v ")),
    ("K:STRING= \t ", ("K", "STRING", " \t ")),
    ("Intel(R) MKL-DNN_SOURCE_DIR:STATIC=/x", ("Intel(R) MKL-DNN_SOURCE_DIR", "STATIC", "/x")),
])
def test_parse_entry(line: str, expected: tuple[str, str | None, str]) -> None:
    assert parse_entry(line) == CacheEntry(*expected)


@pytest.mark.parametrize("line", ["no equals", '"K:STRING', "K:STRING", ""])
def test_parse_entry_rejects_lines_without_equals(line: str) -> None:
    assert parse_entry(line) is None


def test_constants() -> None:
    assert all(map(is_cmake_on, ["1", "y", "On", "yEs", "TRUE"]))
    assert not any(map(is_cmake_on, ["2", "ON ", "enable", "İ", "yeſ"]))
    assert all(map(is_cmake_off, ["", "0", "n", "No", "oFF", "False", "IGNORE", "NOTFOUND",
                                  "x-NOTFOUND"]))
    assert not any(map(is_cmake_off, ["0.0", "-0", "notfound", "x-notfound", "FALSE ", "ıgnore"]))


def test_error_names_file_and_line_and_what_to_do(tmp_path: Path) -> None:
    file = tmp_path / "CMakeCache.txt"
    file.write_text("# header\nGOOD:BOOL=ON\n\ngarbage line without equals\n")
    with pytest.raises(CMakeCacheError) as caught:
        CMakeCache.read(tmp_path)
    error = caught.value
    assert isinstance(error, BuildkitError)
    assert (error.path, error.lineno, error.line) == (str(file), 4, "garbage line without equals")
    message = str(error)
    assert f"{file}:4:" in message and "garbage line without equals" in message
    assert "CMAKE_FRESH=1" in message and f"delete {file}" in message


def test_untyped_internal_static_and_missing_keys() -> None:
    cache = CMakeCache.parse("UNTYPED=x\nI:INTERNAL=0\nS:STATIC=1\nE:STRING=\n")
    assert cache["UNTYPED"] == CacheEntry("UNTYPED", None, "x")
    assert (cache["I"].type, cache["S"].type) == ("INTERNAL", "STATIC")
    assert [cache.get_bool(n) for n in ("UNTYPED", "I", "S", "E")] == [True, False, True, False]
    with pytest.raises(KeyError):
        cache.get_bool("MISSING")
    with pytest.raises(KeyError):
        cache["MISSING"]
    assert cache.get_value("MISSING") is None and cache.get_value("UNTYPED") == "x"


def test_is_a_read_only_mapping() -> None:
    cache = CMakeCache.parse("A:STRING=1\nB:STRING=2\nA:BOOL=3\n")
    assert isinstance(cache, Mapping) and list(cache) == ["A", "B"] and len(cache) == 2
    assert cache["A"] == CacheEntry("A", "BOOL", "3")
    with pytest.raises(TypeError):
        cache["A"] = CacheEntry("A", "STRING", "x")  # type: ignore[index]
    with pytest.raises(AttributeError):
        cache["A"].value = "x"  # type: ignore[misc]


def test_pytorch_dict() -> None:
    text = ("USE_CUDA:BOOL=ON\nUSE_MKL:BOOL=IGNORE\nBLAS:FILEPATH=BLAS-NOTFOUND\nLIB:FILEPATH=/l\n"
            "INC:PATH=INC-NOTFOUND\nX:INTERNAL=1\nY:STATIC=2\nU=u\n")
    assert CMakeCache.parse(text).as_pytorch_dict() == {
        "USE_CUDA": True, "USE_MKL": False, "BLAS": None, "LIB": "/l", "INC": "INC-NOTFOUND",
        "U": "u"}


def test_read_if_exists(tmp_path: Path) -> None:
    assert CMakeCache.read_if_exists(tmp_path) is None
    assert CMakeCache.read_if_exists(tmp_path / "missing" / "CMakeCache.txt") is None
    (tmp_path / "CMakeCache.txt").write_text("A:STRING=1\r\n")
    cache = CMakeCache.read_if_exists(tmp_path)
    assert cache is not None and cache["A"].value == "1"
    assert cache.path == str(tmp_path / "CMakeCache.txt")
