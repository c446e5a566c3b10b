from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buildkit.builder.toolchain import linker_script as ls
from buildkit.errors import BuildkitError, ToolchainError
from buildkit.frontends.cli import linker_script as linker_script_cli
from buildkit_testing.paths import REPO

FIXTURES = Path(__file__).parent / "fixtures" / "linker_script"
VERBOSE = (FIXTURES / "ld_verbose_x86_64.txt").read_text()
ONE_LINE = "SECTIONS\n{\n  .init : { KEEP (*(.init)) }\n  .text : { *(.text .text.*) }\n}\n"
HAS_GNU_LD = sys.platform.startswith("linux") and all(map(shutil.which, ("gcc", "ld", "nm")))


def fake_program(path: Path, body: str) -> str:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


# --- parsing and transforming ---------------------------------------------------------

def test_parse_symbols_skips_comments_blanks_and_repeats() -> None:
    text = "# hot functions\n\n_ZN2at6native3addEv\n  f2  # inline comment\nf5\nf2\n"
    assert ls.parse_symbols(text) == ["_ZN2at6native3addEv", "f2", "f5"]


@pytest.mark.parametrize("line", ["foo bar", "f(int)", "x;y", "{f}"])
def test_parse_symbols_rejects_non_names(line: str) -> None:
    with pytest.raises(BuildkitError, match="line 2"):
        ls.parse_symbols(f"ok\n{line}\n", "hot.txt")


def test_extract_default_script() -> None:
    script = ls.extract_default_script(VERBOSE)
    assert script.startswith("/* Script for")
    assert script.rstrip().endswith("}")
    assert "=" * 50 not in script and "Supported emulations" not in script


@pytest.mark.parametrize("output", ["", "GNU ld 2.40\n" + "=" * 50 + "\nSECTIONS {}\n",
                                    "LLD 17.0.6 (compatible with GNU linkers)\n"])
def test_extract_requires_two_delimiters(output: str) -> None:
    with pytest.raises(BuildkitError) as info:
        ls.extract_default_script(output, "ld.lld")
    assert "'=' characters" in str(info.value) and "GNU ld" in str(info.value)


def test_prioritized_script_on_real_default() -> None:
    default = ls.extract_default_script(VERBOSE)
    result = ls.prioritized_script(default, ["f5", "f2"])
    lines = result.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"\s*\.text\s+:", line))
    assert lines[start + 1].strip() == "{"
    assert lines[start + 2:start + 4] == ["    *(.text.f5)", "    *(.text.f2)"]
    assert lines[start + 4].strip().startswith("*(.text.unlikely")
    # Nothing else changes.
    assert [line for line in lines if ".text.f" not in line] == default.splitlines()


def test_prioritized_script_brace_on_same_line() -> None:
    result = ls.prioritized_script(ONE_LINE, ["hot"])
    assert result == ("SECTIONS\n{\n  .init : { KEEP (*(.init)) }\n  .text : {\n"
                      "    *(.text.hot)\n    *(.text .text.*) }\n}\n")


def test_prioritized_script_brace_alone_on_line_after_header() -> None:
    script = "SECTIONS\n{\n  .text :\n  {\n    *(.text)\n  }\n}\n"
    assert ls.prioritized_script(script, ["a", "b"]) == (
        "SECTIONS\n{\n  .text :\n  {\n    *(.text.a)\n    *(.text.b)\n    *(.text)\n  }\n}\n")


@pytest.mark.parametrize("script, found", [
    ("SECTIONS\n{\n  .data : { *(.data) }\n}\n", "found none"),
    ("SECTIONS\n{\n  .text : { *(.text) }\n  .text : { *(.t2) }\n}\n", "found 2"),
])
def test_prioritized_script_needs_exactly_one_text_section(script: str, found: str) -> None:
    with pytest.raises(BuildkitError) as info:
        ls.prioritized_script(script, ["f"])
    assert found in str(info.value) and "'.text :'" in str(info.value)


def test_prioritized_script_needs_brace() -> None:
    with pytest.raises(BuildkitError, match="not followed by '{'"):
        ls.prioritized_script("SECTIONS\n{\n  .text : ;\n}\n", ["f"])


# --- flags -------------------------------------------------------------------------------

def test_prioritized_text_flags(tmp_path: Path) -> None:
    assert ls.prioritized_text_flags(False, "x.ld") == {}
    flags = ls.prioritized_text_flags(True, tmp_path / "x.ld")
    assert flags == {"LDFLAGS": [f"-T{tmp_path / 'x.ld'}"],
                     "CFLAGS": ["-ffunction-sections", "-fdata-sections"],
                     "CXXFLAGS": ["-ffunction-sections", "-fdata-sections"]}


def test_relative_script_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert ls.prioritized_text_flags(True, "build/x.ld")["LDFLAGS"] == [f"-T{tmp_path}/build/x.ld"]




def test_default_linker_script_errors(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError, match="not found"):
        ls.default_linker_script(str(tmp_path / "no-such-ld"))
    failing = fake_program(tmp_path / "bad-ld", "echo 'unknown option' >&2\nexit 2")
    with pytest.raises(ToolchainError, match="unknown option"):
        ls.default_linker_script(failing)
    lld = fake_program(tmp_path / "lld", "echo 'LLD 17 (compatible with GNU linkers)'")
    with pytest.raises(BuildkitError, match="lld and gold"):
        ls.default_linker_script(lld)


def test_write_linker_script_only_when_changed(tmp_path: Path) -> None:
    ld = fake_program(tmp_path / "ld", f"cat {FIXTURES / 'ld_verbose_x86_64.txt'}")
    symbols = tmp_path / "hot.txt"
    symbols.write_text("f5\nf2\n")
    out = tmp_path / "gen" / "prioritized.ld"
    assert ls.write_linker_script(symbols, out, ld) == out
    assert "*(.text.f5)\n    *(.text.f2)\n" in out.read_text()
    os.utime(out, (1, 1))
    ls.write_linker_script(symbols, out, ld)
    assert out.stat().st_mtime == 1
    symbols.write_text("f1\n")
    ls.write_linker_script(symbols, out, ld)
    assert out.stat().st_mtime != 1 and "*(.text.f1)" in out.read_text()
    assert sorted(p.name for p in out.parent.iterdir()) == ["prioritized.ld"]


def test_write_linker_script_input_errors(tmp_path: Path) -> None:
    with pytest.raises(BuildkitError, match="Cannot read"):
        ls.write_linker_script(tmp_path / "missing.txt", tmp_path / "o.ld")
    (tmp_path / "empty.txt").write_text("# nothing yet\n\n")
    with pytest.raises(BuildkitError, match="lists no symbols"):
        ls.write_linker_script(tmp_path / "empty.txt", tmp_path / "o.ld")


def test_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ld = fake_program(tmp_path / "ld", f"cat {FIXTURES / 'ld_verbose_x86_64.txt'}")
    (tmp_path / "hot.txt").write_text("f3\n")
    out = tmp_path / "s.ld"
    assert linker_script_cli.main([str(tmp_path / "hot.txt"), "-o", str(out), "--ld", ld]) == 0
    assert "*(.text.f3)" in out.read_text()
    assert linker_script_cli.main([str(tmp_path / "missing.txt"), "-o", str(out), "--ld", ld]) == 1
    assert "missing.txt" in capsys.readouterr().err


def test_python_dash_m(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "buildkit.frontends.cli.linker_script", "--help"],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0 and "SYMBOLS_FILE" in result.stdout


# --- a real link -----------------------------------------------------------------------------

def build_library(tmp_path: Path, name: str, extra: list[str]) -> list[str]:
    """Link f1..f6 into a shared library; return the functions in address order."""
    source = tmp_path / "funcs.c"
    source.write_text("".join(f"int f{i}(int x) {{ return x * {i} + {i}; }}\n" for i in range(1, 7)))
    library = tmp_path / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", library, source, *extra], check=True)
    listing = subprocess.run(["nm", "-n", "--defined-only", library], check=True,
                             capture_output=True, text=True).stdout
    return [line.split()[2] for line in listing.splitlines()
            if re.fullmatch(r"\S+ T f\d", line)]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_GNU_LD, reason="needs Linux with gcc, GNU ld and nm")
def test_real_link_puts_prioritized_functions_first(tmp_path: Path) -> None:
    (tmp_path / "hot.txt").write_text("# hottest first\nf5\nf2\n")
    script = ls.write_linker_script(tmp_path / "hot.txt", tmp_path / "prioritized.ld")
    flags = ls.prioritized_text_flags(True, script)

    baseline = build_library(tmp_path, "libplain.so", flags["CFLAGS"])
    assert baseline == ["f1", "f2", "f3", "f4", "f5", "f6"]
    ordered = build_library(tmp_path, "libhot.so", flags["CFLAGS"] + flags["LDFLAGS"])
    assert ordered[:2] == ["f5", "f2"]
    assert sorted(ordered) == baseline
    # The executable-style default script still yields a loadable shared library.
    assert ctypes.CDLL(str(tmp_path / "libhot.so")).f5(2) == 15

    # Without -ffunction-sections there is no .text.f5 to pick out, so nothing moves.
    assert build_library(tmp_path, "libnosections.so", flags["LDFLAGS"]) == baseline
