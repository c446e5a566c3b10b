"""The buildkit command line, and flow step 3 (prioritized text) on a real build."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from buildkit.errors import exit_on_error
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run

BUILDKIT = [sys.executable, "-m", "buildkit"]


def test_help_lists_every_subcommand():
    text = run([*BUILDKIT, "--help"]).stdout
    for name in ("develop", "build", "options", "doctor", "report", "clean", "linker-script", "docs",
                 "dist-cluster"):
        assert name in text


def test_options_prints_the_table_with_sources(test_package):
    minimal_project = test_package("minimal")
    result = run([*BUILDKIT, "options", minimal_project], env=clean_env(MAX_JOBS="3", USE_FAST_SUM="OFF",
                                                                       COLUMNS="200"))
    text = result.stdout + result.stderr
    assert "MAX_JOBS" in text and "environment" in text and "USE_FAST_SUM" in text


def test_bad_value_through_the_cli_is_one_clear_paragraph(test_package):
    minimal_project = test_package("minimal")
    result = run([*BUILDKIT, "build", minimal_project], env=clean_env(USE_NINJA="sometimes"), check=False)
    assert result.returncode == 1
    assert "USE_NINJA='sometimes' is not a boolean" in result.stderr and "Traceback" not in result.stderr


def test_conflicting_modes_through_the_cli(test_package):
    minimal_project = test_package("minimal")
    result = run([*BUILDKIT, "develop", minimal_project],
                 env=clean_env(BUILD_LIBTORCH_WHL="1", BUILD_PYTHON_ONLY="1"), check=False)
    assert result.returncode == 1 and "Set one of them to 0" in result.stderr
    assert not (minimal_project / "build").exists()


@pytest.mark.slow
def test_build_then_report_and_cmake_only(test_package, tmp_path):
    minimal_project = test_package("minimal")
    run([*BUILDKIT, "build", minimal_project], env=clean_env())
    assert list((minimal_project / "minimal").glob("_C*.so"))
    report = run([*BUILDKIT, "report", build_folder(minimal_project), "-o", tmp_path / "trace.json"])
    assert "minimal.cpp" in report.stdout + report.stderr
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    fresh = run([*BUILDKIT, "build", minimal_project], env=clean_env(CMAKE_ONLY="1", CMAKE_FRESH="1"))
    assert "CMAKE_ONLY" in fresh.stderr


@pytest.mark.slow
def test_prioritized_text_puts_listed_functions_first(test_package):
    minimal_project = test_package("minimal")
    symbols = minimal_project / "cmake" / "prioritized_text.txt"
    # dot() is defined after sum() in minimal.cpp; the script must move it first.
    symbols.write_text("_ZN7minimal3dotEPKdS1_m\n_ZN7minimal13build_flavourEv\n")
    run([*BUILDKIT, "build", minimal_project], env=clean_env(USE_PRIORITIZED_TEXT_FOR_LD="1"))
    assert (build_folder(minimal_project) / "linker_script.ld").is_file()
    nm = subprocess.run(["nm", "-n", "--defined-only", minimal_project / "minimal" / "lib" / "libminimal.so"],
                        capture_output=True, text=True, check=True).stdout
    text_symbols = [line.split()[2] for line in nm.splitlines() if line.split()[1] in "tT"
                    and line.split()[2].startswith("_ZN7minimal")]
    assert text_symbols[:2] == ["_ZN7minimal3dotEPKdS1_m", "_ZN7minimal13build_flavourEv"]
    commands = json.loads((minimal_project / "compile_commands.json").read_text())
    assert all("-ffunction-sections" in entry["command"] for entry in commands)


def test_prioritized_text_without_symbols_file_is_a_clear_error(test_package):
    minimal_project = test_package("minimal")
    result = run([*BUILDKIT, "build", minimal_project], env=clean_env(USE_PRIORITIZED_TEXT_FOR_LD="1"), check=False)
    assert result.returncode == 1 and "prioritized_text.txt" in result.stderr and "Traceback" not in result.stderr


def test_linker_script_subcommand(tmp_path):
    symbols = tmp_path / "hot.txt"
    symbols.write_text("hot_function\n")
    run([*BUILDKIT, "linker-script", symbols, "-o", tmp_path / "out.ld"])
    assert "*(.text.hot_function)" in (tmp_path / "out.ld").read_text()


def test_doctor_prints_one_table(test_package):
    minimal_project = test_package("minimal")
    result = run([*BUILDKIT, "doctor", minimal_project], env=clean_env(COLUMNS="200"), check=False)
    text = result.stdout + result.stderr
    assert "cmake" in text and "ninja" in text and "Python" in text


def test_an_unexpected_error_shows_its_traceback_labelled_as_a_bug(capsys: pytest.CaptureFixture[str]) -> None:
    @exit_on_error
    def broken() -> int:
        raise RuntimeError("a programming error")

    assert broken() == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: a programming error" in err, err
    assert "buildkit bug" in err and "please report it" in err, err
