"""First-error extraction, hints and the step runner, on captured tool output."""

from __future__ import annotations

import shlex
import sys
import textwrap

import pytest

from buildkit._util import spawn
from buildkit.builder import build_errors as bo
from buildkit.builder import build_output, ninja_status
from buildkit.errors import BuildFailedError


def lines(text: str) -> list[str]:
    return textwrap.dedent(text).strip("\n").splitlines()


# Captured from g++ 12, GNU ld, nvcc 13 and CMake 4 under Ninja 1.13.
GCC = lines("""
    [1/3] Building CXX object CMakeFiles/greet.dir/src/greet.cpp.o
    [2/3] Building CXX object CMakeFiles/greet.dir/src/broken.cpp.o
    FAILED: [code=1] CMakeFiles/greet.dir/src/broken.cpp.o
    /usr/bin/c++ -Dgreet_EXPORTS -I/p/src -O3 -DNDEBUG -fPIC -o CMakeFiles/greet.dir/src/broken.cpp.o -c /p/src/broken.cpp
    /p/src/broken.cpp: In function ‘int broken_answer()’:
    /p/src/broken.cpp:3:10: error: ‘undeclared_value’ was not declared in this scope
        3 |   return undeclared_value + 1;
          |          ^~~~~~~~~~~~~~~~
    /p/src/broken.cpp:7:1: error: a second error that is not the first
    ninja: build stopped: subcommand failed.
""")
LD = lines("""
    [3/4] Linking CXX executable hello
    FAILED: [code=1] hello
    : && /usr/bin/c++ -O3 -DNDEBUG CMakeFiles/hello.dir/src/main.cpp.o -o hello libgreet.so && :
    /usr/bin/ld: CMakeFiles/hello.dir/src/main.cpp.o: in function `main':
    main.cpp:(.text+0x5): undefined reference to `missing_function()'
    collect2: error: ld returned 1 exit status
    ninja: build stopped: subcommand failed.
""")
NVCC = lines("""
    [1/2] Building CUDA object CMakeFiles/k.dir/kernel.cu.o
    FAILED: [code=2] CMakeFiles/k.dir/kernel.cu.o
    /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -c /p/kernel.cu -o CMakeFiles/k.dir/kernel.cu.o
    /p/kernel.cu(1): error: identifier "undefined_thing" is undefined
      __attribute__((global)) void k(int* p) { *p = undefined_thing; }
                                                    ^

    1 error detected in the compilation of "/p/kernel.cu".
""")
NVCC_FATAL = ["[1/2] Building CUDA object k.cu.o", "nvcc fatal   : Unsupported gpu architecture 'sm_20'"]
CMAKE = lines("""
    -- The CXX compiler identification is GNU 12.2.0
    -- Detecting CXX compiler ABI info - done
    CMake Error at CMakeLists.txt:10 (message):
      BROKEN_CONFIGURE is on


    -- Configuring incomplete, errors occurred!
""")
KILLED = lines("""
    [7/90] Building CXX object CMakeFiles/big.dir/huge.cpp.o
    FAILED: [code=1] CMakeFiles/big.dir/huge.cpp.o
    /usr/bin/c++ -O3 -c /p/huge.cpp -o CMakeFiles/big.dir/huge.cpp.o
    c++: fatal error: Killed signal terminated program cc1plus
    compilation terminated.
""")
MISSING_HEADER = lines("""
    [1/1] Building CXX object h.cpp.o
    h.cpp:1:10: fatal error: Python.h: No such file or directory
        1 | #include <Python.h>
          |          ^~~~~~~~~~
    compilation terminated.
""")


def test_gcc_error_with_its_function_context():
    site = bo.find_first_error(GCC)
    assert (site.kind, site.file, site.line) == ("compiler", "/p/src/broken.cpp", 3)
    assert site.message == "‘undeclared_value’ was not declared in this scope"
    assert site.context == (
        "/p/src/broken.cpp: In function ‘int broken_answer()’:",
        "/p/src/broken.cpp:3:10: error: ‘undeclared_value’ was not declared in this scope",
        "    3 |   return undeclared_value + 1;",
        "      |          ^~~~~~~~~~~~~~~~",
    )


def test_linker_undefined_reference():
    site = bo.find_first_error(LD)
    assert site.kind == "linker" and "undefined reference to `missing_function()'" in site.message
    assert site.context[0] == "/usr/bin/ld: CMakeFiles/hello.dir/src/main.cpp.o: in function `main':"


def test_nvcc_errors():
    site = bo.find_first_error(NVCC)
    assert (site.kind, site.file, site.line) == ("nvcc", "/p/kernel.cu", 1)
    assert site.message == 'identifier "undefined_thing" is undefined'
    fatal = bo.find_first_error(NVCC_FATAL)
    assert (fatal.kind, fatal.message) == ("nvcc", "Unsupported gpu architecture 'sm_20'")
    ptxas = bo.find_first_error(["ptxas error   : Entry function 'k' uses too much shared data"])
    assert ptxas.kind == "nvcc" and "too much shared data" in ptxas.message


def test_cmake_error_with_its_message():
    site = bo.find_first_error(CMAKE)
    assert (site.kind, site.file, site.line) == ("cmake", "CMakeLists.txt", 10)
    assert site.context == ("CMake Error at CMakeLists.txt:10 (message):", "  BROKEN_CONFIGURE is on")


def test_no_error_found():
    assert bo.find_first_error(["[1/1] Linking", "something odd"]) is None


def test_failing_command_from_ninja():
    assert bo.failing_command(GCC) == ("CMakeFiles/greet.dir/src/broken.cpp.o", GCC[3])
    assert bo.failing_command(LD)[0] == "hello"
    assert bo.failing_command(CMAKE) == (None, None)


@pytest.mark.parametrize("output, code", [(KILLED, 1), (["[1/2] x"], 137), (["[1/2] x"], -9),
                                          (["c++: internal compiler error: Killed (program cc1plus)"], 1)])
def test_out_of_memory_hint_names_max_jobs(output, code):
    hint = bo.hint_for(output, code, jobs=16)
    assert "out of memory" in hint and "MAX_JOBS=16" in hint and "MAX_JOBS=8" in hint


def test_missing_header_hints():
    assert "python3-dev" in bo.hint_for(MISSING_HEADER, 1, None)
    assert "CUDA toolkit" in bo.missing_header_hint("cuda_runtime.h")
    assert "libgomp" in bo.missing_header_hint("omp.h")
    assert "libopenblas-dev" in bo.missing_header_hint("cblas.h")
    assert "install the package that provides it" in bo.missing_header_hint("foo/bar.h")
    # NVIDIA's headers name the wheel that carries them (CUDA 13 splits the toolkit into wheels).
    assert "nvidia-cuda-crt wheel of nvcc's release" in bo.missing_header_hint("crt/host_config.h")
    assert 'NVIDIA\'s nvidia-cusparse wheel (add { distribution = "nvidia-cusparse" } to library-dependencies' in (
        bo.missing_header_hint("cusparse.h"))
    assert "nvidia-cuda-cccl wheel" in bo.missing_header_hint("thrust/device_vector.h")
    assert "nvidia-cuda-cccl wheel" in bo.missing_header_hint("cuda/std/atomic")
    clang = ["a.cpp:1:10: fatal error: 'omp.h' file not found"]
    assert "libomp-dev" in bo.hint_for(clang, 1, None)
    assert bo.hint_for(GCC, 1, 4) is None


def test_failure_error_message(tmp_path):
    log = tmp_path / "build.log"
    error = bo.failure_error("build", ["ninja"], GCC, 1, log, jobs=2)
    assert isinstance(error, BuildFailedError)
    assert error.message.startswith("Compiling failed at /p/src/broken.cpp:3:\n")
    assert "  /p/src/broken.cpp:3:10: error: ‘undeclared_value’" in error.message
    assert "a second error" not in error.message
    assert "Failing command (building CMakeFiles/greet.dir/src/broken.cpp.o):\n  /usr/bin/c++" in error.message
    assert error.log_path == str(log) and str(log) in str(error) and error.returncode == 1


def test_failure_without_a_recognizable_error_shows_the_tail(tmp_path):
    error = bo.failure_error("install", ["cmake", "--install", "b"], ["line one", "", "line two"], 2, tmp_path / "l")
    assert "without a recognizable error" in error.message and "  line two" in error.message
    assert "Command:\n  cmake --install b" in error.message


def script(tmp_path, body: str) -> list[str]:
    path = tmp_path / "step.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def test_run_step_logs_and_counts(tmp_path, capsys):
    command = script(tmp_path, """
        for i in range(1, 21):
            print(f"[{i}/20] Building CXX object o{i}.o")
    """)
    result = build_output.run_step("build", command, build_dir=tmp_path)
    assert (result.returncode, result.steps, result.no_work) == (0, 20, False)
    log = tmp_path / ".buildkit" / "logs" / "build.log"
    assert result.log_path == log and "[20/20] Building CXX object o20.o" in log.read_text()
    assert (tmp_path / ".buildkit" / "logs" / "last.log").read_text() == log.read_text()
    progress = [line for line in capsys.readouterr().err.splitlines() if "compiling" in line]
    assert progress[0].endswith("10% (2/20)") and progress[-1].endswith("100% (20/20)")
    assert len(progress) == 10  # a line every 10%, not one per step


@pytest.mark.parametrize("body", [
    'print("[1/3] Building C object a.o"); print("[2/3] Building C object b.o")',  # statuses at edge start
    'print("[1/2] Re-running CMake..."); print("[1/3] Building C object a.o")',  # a regeneration restarts
])
def test_a_successful_build_ends_at_100_percent(tmp_path, capsys, body):
    build_output.run_step("build", script(tmp_path, body), build_dir=tmp_path)
    progress = [line for line in capsys.readouterr().err.splitlines() if "compiling" in line]
    assert progress[-1].endswith("100% (3/3)"), progress


def test_a_failed_build_does_not_claim_100_percent(tmp_path, capsys):
    with pytest.raises(BuildFailedError):
        build_output.run_step("build", script(tmp_path, 'print("[1/3] a.o"); print("error: boom"); raise SystemExit(1)'),
                    build_dir=tmp_path)
    assert "100%" not in capsys.readouterr().err


def test_run_step_no_work_is_silent(tmp_path, capsys):
    result = build_output.run_step("build", script(tmp_path, 'print("ninja: no work to do.")'), build_dir=tmp_path)
    assert result.no_work and result.steps == 0
    assert capsys.readouterr().err == ""


def test_run_step_verbose_streams_everything(tmp_path, capsys):
    build_output.run_step("build", script(tmp_path, 'print("[1/1] x"); print("a warning")'), build_dir=tmp_path, verbose=True)
    err = capsys.readouterr().err
    assert "[1/1] x" in err and "a warning" in err


def test_run_step_failure_raises_with_first_error(tmp_path):
    body = "import sys\n" + "".join(f"print({line!r})\n" for line in GCC) + "sys.exit(1)\n"
    with pytest.raises(BuildFailedError) as caught:
        build_output.run_step("build", script(tmp_path, body), build_dir=tmp_path, jobs=3)
    assert "/p/src/broken.cpp:3" in caught.value.message
    assert caught.value.log_path == str(tmp_path / ".buildkit" / "logs" / "build.log")


def test_run_step_killed_compiler(tmp_path):
    with pytest.raises(BuildFailedError) as caught:
        build_output.run_step("build", script(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"),
                    build_dir=tmp_path, jobs=12)
    assert caught.value.returncode == -9 and "MAX_JOBS=12" in caught.value.hint


def test_run_step_missing_program(tmp_path):
    with pytest.raises(BuildFailedError, match="Could not start"):
        build_output.run_step("build", [str(tmp_path / "no-such-ninja")], build_dir=tmp_path)


def test_summary(capsys, monkeypatch):
    """The result line's time is the command's, from its start (here 5 s ago), not its phases' sum;
    a build type's line (of a build-type list's other type) says that build's own."""
    monkeypatch.setattr(build_output.console, "command_seconds", lambda: 5.0)
    build_output.print_summary([("build", 0.004)], 0)
    build_output.print_summary([("configure", 1.0), ("build", 2.5), ("install", 0.1)], 7)
    build_output.print_summary([("configure", 1.0), ("build", 0.5)], 0)
    build_output.print_summary([("build", 2.5), ("install", 0.1)], 3, "Debug")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "buildkit: up to date (5.00 s)"
    assert err[1] == "buildkit: done in 5.00 s: configure 1.00 s, build 2.50 s (7 targets), install 0.10 s"
    assert err[2] == "buildkit: done in 5.00 s: configure 1.00 s, build 0.50 s (nothing to rebuild)"
    assert err[3] == "buildkit: done in 2.60 s (Debug build): build 2.50 s (3 targets), install 0.10 s"


def test_a_command_with_a_setup_py_run_says_so_in_its_one_line(capsys, monkeypatch):
    """`buildkit develop` holds its build's line to its end: a setup.py run (less the builds it ran
    itself, as a buildkit.torch setup.py's BuildExtension does) is a phase of it, never "up to date"."""
    monkeypatch.setattr(build_output.console, "command_seconds", lambda: 9.0)
    with build_output.one_result_line():
        with build_output.setup_py_phase():
            build_output.print_summary([("build", 0.5)], 0)  # inside setup.py: held, not printed
            assert capsys.readouterr().err == ""
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("buildkit: done in 9.00 s: setup.py "), err
    assert err[0].endswith(", build 0.50 s (nothing to rebuild)"), err

    with build_output.one_result_line():
        build_output.print_summary([("build", 0.01)], 0)
    assert capsys.readouterr().err == "buildkit: up to date (9.00 s)\n"
    with build_output.one_result_line():  # a configure-only run (CMAKE_ONLY) says so itself
        pass
    assert capsys.readouterr().err == ""


# Captured from CMake 4: a library and an include folder that find_* did not find.
NOTFOUND = lines("""
    -- Configuring done (0.9s)
    CMake Error: The following variables are used in this project, but they are set to NOTFOUND.
    Please set them or make sure they are set and tested correctly in the CMake files:
    /tmp/nf/SOME_INCLUDE_DIR
       used as include directory in directory /tmp/nf
    CUDA_nvrtc_LIBRARY
        linked by target "m" in directory /tmp/nf

    -- Generating done (0.1s)
    CMake Generate step failed.  Build files cannot be regenerated correctly.
""")


def test_notfound_variables_are_named_in_the_error_box(tmp_path):
    assert bo.notfound_variables(NOTFOUND) == [
        ("SOME_INCLUDE_DIR", "used as include directory in directory /tmp/nf"),
        ("CUDA_nvrtc_LIBRARY", 'linked by target "m" in directory /tmp/nf')]
    error = bo.failure_error("configure", ["cmake"], NOTFOUND, 1, tmp_path / "configure.log")
    assert ("Set to NOTFOUND:\n  SOME_INCLUDE_DIR (used as include directory in directory /tmp/nf)\n"
            '  CUDA_nvrtc_LIBRARY (linked by target "m" in directory /tmp/nf)') in error.message
    assert error.hint.startswith("SOME_INCLUDE_DIR, CUDA_nvrtc_LIBRARY: each is what a find_library")
    assert "-DSOME_INCLUDE_DIR=<path>" in error.hint
    assert bo.notfound_variables(CMAKE) == []


# Captured from CMake 4: find_package(Torch REQUIRED) with no torch installed.
TORCH_MISSING = lines("""
    CMake Error at CMakeLists.txt:3 (find_package):
      By not providing "FindTorch.cmake" in CMAKE_MODULE_PATH this project has
      asked CMake to find a package configuration file provided by "Torch", but
      CMake did not find one.
""")


@pytest.mark.parametrize("output", [TORCH_MISSING, ["CMake Error at /x/BuildkitTorch.cmake:151 (message):",
                                                    "  buildkit: PyTorch was not found: no TorchConfig.cmake"]])
def test_missing_torch_names_the_fix(output):
    hint = bo.hint_for(output, 1, None)
    assert "PyTorch is not installed where the build runs" in hint and "--no-build-isolation" in hint


@pytest.mark.parametrize("line, parsed", [
    ("[3/40] Building CXX object x.o", (3, 40, "Building CXX object x.o")),
    ("[1/2] Re-checking globbed directories...", (1, 2, "Re-checking globbed directories...")),
    ("[1/1]", (1, 1, "")),
    ("[x/2] y", None), ("[3 40] y", None), ("ninja: no work to do.", None), ("[3/40 y", None), ("", None),
])
def test_ninja_status_lines(line, parsed):
    assert ninja_status.status(line) == parsed


@pytest.mark.parametrize("edge, bookkeeping", [
    ("Re-checking globbed directories...", True),
    ("cd /b && /usr/bin/cmake -P /b/CMakeFiles/VerifyGlobs.cmake", True),  # `ninja -v`
    ("C:\\cmake\\bin\\cmake.exe -P C:/b/CMakeFiles/VerifyGlobs.cmake", True),
    ("/usr/bin/cmake -P /b/CMakeFiles/VerifyGlobs.cmake.bak", False),
    ("Re-running CMake...", False), ("Building CXX object VerifyGlobs.cmake", False),
])
def test_bookkeeping_edges(edge, bookkeeping):
    assert ninja_status.is_bookkeeping(edge) is bookkeeping


def test_the_log_names_the_command_as_a_shell_reads_it():
    for command in (["ninja", "-C", "build"], ["a b", "it's", "", "x=$HOME", "ok/path-1.2:3@%+=,"]):
        assert ninja_status.command_line(command) == shlex.join(command)


def test_a_started_process_with_lines_given_back(tmp_path, capsys):
    """The no-op develop starts ninja itself and reads its first lines; run_step then reads
    them again, and the rest, as from any build."""
    process = spawn.start(script(tmp_path, 'print("[1/2] Re-checking globbed directories..."); print("[2/2] a.o")'))
    first = next(iter(process.stdout))
    spawn.unread(process, [first])
    result = build_output.run_step("build", ["ninja"], build_dir=tmp_path, process=process)
    assert (result.returncode, result.steps) == (0, 1)  # the glob check is not a step
    assert "[1/2] Re-checking" in (tmp_path / ".buildkit" / "logs" / "build.log").read_text()

    failing = spawn.start(script(tmp_path, 'print("error: boom"); raise SystemExit(3)'))
    with pytest.raises(BuildFailedError) as caught:
        build_output.run_step("build", ["ninja"], build_dir=tmp_path, process=failing)
    assert caught.value.returncode == 3 and "boom" in caught.value.message
    with pytest.raises(FileNotFoundError):
        spawn.start([str(tmp_path / "no-such-ninja")])
