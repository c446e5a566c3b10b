"""CMakeDriver against real cmake, ninja and g++ on tests/packages/hello."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from buildkit.builder.configure.cmake_cache import CMakeCache
from buildkit.builder.configure.configure_state import Decision, diff_inputs, python_identity
from buildkit.builder.driver import CMakeDriver
from buildkit.builder.toolchain import tools as toolchain
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit.errors import BuildFailedError
from buildkit_testing.paths import REPO, build_folder

pytestmark = pytest.mark.slow



@pytest.fixture(autouse=True)
def probe_cache(session_probe_cache):
    """Every test here probes tools: one cache for the session."""


@pytest.fixture
def project(test_package) -> Path:
    return test_package("hello")


def driver(root: Path, env: dict[str, str] | None = None, **kwargs) -> CMakeDriver:
    settings = load_settings(root, option_keys())
    options = load_options(settings, environ={"MAX_JOBS": "2", **(env or {})})
    return CMakeDriver(settings, options, install_prefix=root / "hello", **kwargs)


def installed_mtimes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted((root / "hello").rglob("*")) if p.is_file()}


def test_first_run_configures_and_second_run_does_nothing(project):
    first = driver(project).run()
    assert first.decision.reasons == ["no CMakeCache.txt"]
    assert first.configured and first.installed and first.steps == 4
    out = subprocess.run([project / "hello" / "bin" / "hello"], capture_output=True, text=True, check=True)
    assert out.stdout == "hello, buildkit\n"
    before = installed_mtimes(project)
    assert set(before) == {"hello/bin/hello", "hello/lib/libgreet.so", "hello/include/greet.h"}

    second = driver(project).run()
    assert second.decision == Decision(False, [])
    assert not second.configured and not second.installed and second.steps == 0
    assert installed_mtimes(project) == before
    # An install asked for directly finds nothing changed and starts nothing.
    assert driver(project).install() is None
    assert installed_mtimes(project) == before


def test_noop_run_skips_install_only_while_install_is_complete(project):
    driver(project).run()
    (project / "hello" / "include" / "greet.h").unlink()
    again = driver(project).run()
    assert again.installed and (project / "hello" / "include" / "greet.h").is_file()
    (project / "src" / "greet.cpp").write_text('#include "greet.h"\nstd::string greeting(const std::string& n) '
                                               '{ return "hi, " + n; }\n')
    rebuilt = driver(project).run()
    assert rebuilt.steps > 0 and rebuilt.installed
    out = subprocess.run([project / "hello" / "bin" / "hello"], capture_output=True, text=True, check=True)
    assert out.stdout == "hi, buildkit\n"


def test_changed_define_reconfigures_and_names_it(project):
    driver(project, {"USE_FOO": "OFF"}).run()
    d = driver(project, {"USE_FOO": "ON"})
    decision = d.configure_decision()
    assert decision.needed and decision.reasons == ["-DUSE_FOO changed: 'OFF' → 'ON'"]
    d.run()
    assert CMakeCache.read(build_folder(project))["USE_FOO"].value == "ON"
    assert not driver(project, {"USE_FOO": "ON"}).configure_decision().needed


def test_other_inputs_are_named(project):
    driver(project).run()
    decision = driver(project, {"DEBUG": "1", "CMAKE_ARGS": "-DX=1",
                                "CMAKE_TOOLCHAIN_FILE": "/nowhere.cmake"}).configure_decision()
    assert "build type changed: 'Release' → 'Debug'" in decision.reasons
    assert "CMAKE_ARGS changed: '' → '-DX=1'" in decision.reasons
    assert "environment CMAKE_TOOLCHAIN_FILE changed: unset → '/nowhere.cmake'" in decision.reasons
    assert decision.fresh  # CMake reads a toolchain file only into a new cache


def test_compiler_variable_forces_a_fresh_configure_only_for_an_enabled_language(project):
    """hello enables C and C++ only: naming a CUDA compiler later is an ordinary
    reconfigure that keeps every object file; naming another C++ compiler starts over."""
    driver(project).run()
    objects = {p: p.stat().st_mtime_ns for p in (build_folder(project) / "CMakeFiles").rglob("*.o")}
    assert objects
    fake_nvcc = project / "nvcc"
    fake_nvcc.write_text("#!/bin/sh\nexit 1\n")
    fake_nvcc.chmod(0o755)
    with_cuda = driver(project, {"CUDACXX": str(fake_nvcc)})
    decision = with_cuda.configure_decision()
    assert decision.reasons == [f"environment CUDACXX changed: unset → '{fake_nvcc}'"]
    assert not decision.fresh
    assert with_cuda.run().steps == 0  # nothing recompiled
    assert {p: p.stat().st_mtime_ns for p in objects} == objects

    other_cxx = shutil.which("g++") or shutil.which("c++")
    decision = driver(project, {"CUDACXX": str(fake_nvcc), "CXX": other_cxx}).configure_decision()
    assert decision.fresh and f"environment CXX changed: unset → '{other_cxx}'" in decision.reasons


def test_cmake_fresh_deletes_cache_and_cmakefiles(project):
    driver(project).run()
    marker = build_folder(project) / "CMakeFiles" / "marker"
    marker.write_text("x")
    fresh = driver(project, {"CMAKE_FRESH": "1"}).run()
    assert fresh.configured and fresh.decision.fresh
    assert fresh.decision.reasons == ["CMAKE_FRESH=1 asks for a configure from scratch"]
    assert not marker.exists()
    assert not driver(project).configure_decision().needed


def test_deleted_ninja_is_replaced_and_reconfigures(project, tmp_path, monkeypatch):
    real = toolchain.find_ninja()
    copy = tmp_path / "isolated-env" / "bin" / "ninja"
    copy.parent.mkdir(parents=True)
    shutil.copy2(real.path, copy)
    with monkeypatch.context() as patch:
        patch.setattr(toolchain, "find_ninja", lambda minimum="1.10", **_: toolchain.Tool("ninja", copy, "1.11.1"))
        driver(project).run()
    assert CMakeCache.read(build_folder(project))["CMAKE_MAKE_PROGRAM"].value == str(copy)
    shutil.rmtree(copy.parent.parent)  # pip deleted its isolated build environment

    result = driver(project).run()
    assert result.configured
    reasons = "\n".join(result.decision.reasons)
    assert f"the build program CMake recorded, {copy}, no longer exists" in reasons
    assert f"ninja changed: {copy} 1.11.1 → {real.path} {real.version}" in reasons
    assert CMakeCache.read(build_folder(project))["CMAKE_MAKE_PROGRAM"].value == str(real.path)
    assert not driver(project).configure_decision().needed


def test_garbled_cache_configures_from_scratch(project):
    driver(project).run()
    cache = build_folder(project) / "CMakeCache.txt"
    lines = cache.read_text().splitlines()
    cache.write_text("\n".join(lines[:10] + ["garbage without an equals sign"] + lines[10:]) + "\n")
    decision = driver(project).configure_decision()
    assert decision.fresh
    assert decision.reasons == ["CMakeCache.txt is unreadable (line 11): reconfiguring from scratch"]
    assert driver(project).run().configured
    assert not driver(project).configure_decision().needed


def test_missing_build_ninja_reconfigures(project):
    driver(project).run()
    (build_folder(project) / "build.ninja").unlink()
    result = driver(project).run()
    assert result.decision.reasons == ["build.ninja is missing"] and result.configured
    assert (build_folder(project) / "build.ninja").is_file()


def test_changed_python_drops_cached_python_entries(project):
    driver(project).run()
    record = build_folder(project) / ".buildkit" / "configure.json"
    data = json.loads(record.read_text())
    data["inputs"]["Python"] = "/old/bin/python 3.10.0"
    record.write_text(json.dumps(data))
    d = driver(project)
    decision = d.configure_decision()
    assert decision.forget_python and not decision.fresh
    assert decision.reasons == [f"Python changed: /old/bin/python 3.10.0 → {python_identity()}"]
    command = d.configure_command(d._tools(), "Release", decision.forget_python)
    assert "-UPython_*" in command and "-UPython3_*" in command
    assert d.run().configured


def test_compile_error_reports_first_error_command_and_log(project):
    with pytest.raises(BuildFailedError) as caught:
        driver(project, {"CMAKE_ARGS": "-DBROKEN=ON"}).run()
    error = caught.value
    text = str(error)
    assert "broken.cpp:3" in text and "error:" in text and "undeclared_value" in text
    assert "Failing command (building CMakeFiles/greet.dir/src/broken.cpp.o)" in text
    log = build_folder(project) / ".buildkit" / "logs" / "build.log"
    assert error.log_path == str(log) and str(log) in text
    assert "FAILED:" in log.read_text()
    assert (build_folder(project) / ".buildkit" / "logs" / "last.log").read_text() == log.read_text()


def test_failed_configure_keeps_no_fingerprint(project):
    driver(project).run()
    with pytest.raises(BuildFailedError) as caught:
        driver(project, {"CMAKE_ARGS": "-DBROKEN_CONFIGURE=ON"}).run()
    assert "CMakeLists.txt:10" in str(caught.value) and "BROKEN_CONFIGURE is on" in str(caught.value)
    assert not (build_folder(project) / ".buildkit" / "configure.json").exists()
    # The cache still says ON (CMake keeps -D values), so turning it off again must configure.
    decision = driver(project, {"CMAKE_ARGS": "-DBROKEN_CONFIGURE=OFF"}).configure_decision()
    assert decision.needed and any("no record of a finished configure" in r for r in decision.reasons)
    assert driver(project, {"CMAKE_ARGS": "-DBROKEN_CONFIGURE=OFF"}).run().configured


def test_cmake_only_stops_after_configure(project, capsys):
    result = driver(project, {"CMAKE_ONLY": "1"}).run()
    assert result.cmake_only and result.configured and "build" not in result.timings and "total" in result.timings
    assert not (build_folder(project) / "libgreet.so").exists()
    assert not (project / "hello").exists()
    err = " ".join(capsys.readouterr().err.split())
    assert "--build" in err and "--target install" in err and "without CMAKE_ONLY" in err
    assert (project / "compile_commands.json").is_file()


def test_forwarded_values_reach_cmake_verbatim(project, tmp_path):
    pwned = tmp_path / "pwned"
    env = {"USE_FOO": f"1; touch {pwned}", "USE_BAR": "it's \"quoted\" $(echo hi) `touch " + str(pwned) + "` a\\b",
           "CMAKE_ONLY": "1"}
    driver(project, env).run()
    cache = CMakeCache.read(build_folder(project))
    assert cache["USE_FOO"].value == env["USE_FOO"]
    assert cache["USE_BAR"].value == env["USE_BAR"]
    assert not pwned.exists()


def test_compile_commands_written_only_when_changed(project):
    driver(project).run()
    target = project / "compile_commands.json"
    assert target.read_bytes() == (build_folder(project) / "compile_commands.json").read_bytes()
    stamp = target.stat().st_mtime_ns
    assert not driver(project).run().compile_commands_updated
    assert target.stat().st_mtime_ns == stamp
    changed = driver(project, {"CMAKE_ARGS": "-DCMAKE_CXX_FLAGS=-DGREETING_EXTRA=1"}).run()
    assert changed.compile_commands_updated and "GREETING_EXTRA" in target.read_text()
    target.unlink()
    assert driver(project, {"CMAKE_ARGS": "-DCMAKE_CXX_FLAGS=-DGREETING_EXTRA=1"}).run().compile_commands_updated


LOCKED_RUN = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from buildkit.builder.driver import CMakeDriver
    from buildkit.errors import BuildkitError
    from buildkit.config.options import load_options, option_keys
    from buildkit.config.settings import load_settings
    root = Path(sys.argv[1])
    settings = load_settings(root, option_keys())
    options = load_options(settings, environ={{"MAX_JOBS": "2"}})
    try:
        CMakeDriver(settings, options, install_prefix=root / "hello", lock_timeout=float(sys.argv[2])).run()
    except BuildkitError as error:
        print(error, file=sys.stderr)
        sys.exit(3)
""")


def test_second_build_waits_for_the_lock_then_gives_up(project, tmp_path):
    script = tmp_path / "locked_run.py"
    script.write_text(LOCKED_RUN.format(repo=str(REPO)))
    holder = driver(project)
    with holder.lock():
        proc = subprocess.run([sys.executable, script, project, "0.5"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    err = " ".join(proc.stderr.split())  # rich wraps long lines
    assert f"waiting for another build in {build_folder(project)} (pid {os.getpid()})" in err
    assert "is still running after 0.5 s" in err


def test_second_build_proceeds_when_the_lock_is_released(project, tmp_path):
    driver(project).run()
    script = tmp_path / "locked_run.py"
    script.write_text(LOCKED_RUN.format(repo=str(REPO)))
    with driver(project).lock():
        proc = subprocess.Popen([sys.executable, script, project, "60"], stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        assert proc.poll() is None  # still waiting
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "waiting for another build" in err


def test_diff_inputs_wording():
    old = {"-DA": "1", "-DB": "x", "ninja": "/a/ninja 1.11"}
    new = {"-DA": "2", "ninja": "/b/ninja 1.13", "-DC": ""}
    assert [text for _, text in diff_inputs(old, new)] == [
        "-DA changed: '1' → '2'",
        "ninja changed: /a/ninja 1.11 → /b/ninja 1.13",
        "-DC changed: unset → ''",
        "-DB is no longer set (CMakeCache.txt keeps 'x')",
    ]


def test_noop_run_is_fast(project):
    driver(project).run()
    times = []
    for _ in range(10):
        started = time.perf_counter()
        driver(project).run()
        times.append(time.perf_counter() - started)
    assert sorted(times)[5] < 0.15
