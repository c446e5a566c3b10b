"""Faults and bad inputs, end to end: real cmake, ninja, gcc and setuptools processes on
a copy of tests/packages/minimal, interrupted, raced, starved of disk and fed damaged state.
docs/reliability.md lists what each test covers and what buildkit does.

A fault lands at a known point without guessing at timings: every build here runs with
hooks that do nothing until the test *arms* one (a file in the fault folder):

* ``CMAKE_PROJECT_INCLUDE`` (forwarded to CMake like any ``CMAKE_*`` variable): a script
  run right after ``project()`` at every configure (buildkit's own, or the one ninja
  starts when CMakeLists.txt changed), which also adds an install script that runs
  first and one that runs last in every install that runs rules through CMake;
* ``BUILDKIT_COMPILER_LAUNCHER``: a launcher in front of the compile of python_bindings.cpp;
* a ``.pth`` file in the test venv wrapping buildkit's wheel writer (``wheel_zip._Writer.add_whole``: pause after the
  third file of the archive) and the ``os.replace`` that publishes ``develop.json``.

An armed hook claims the arming with an atomic rename (so it fires once: the rerun, run
with the same environment, goes through), creates ``paused-<point>`` and waits for
``release-<point>``.  The test waits for the paused file, then signals the build's process
group (the build runs in a session of its own; Ctrl-C in a terminal signals the
foreground group the same way) or releases it.

Every build runs in one fixed folder, so a rerun's files can be compared byte for byte
with a clean build's: setuptools compiles the ``_C`` stub with the working folder in its
debug information.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from buildkit.builder.toolchain import tools as toolchain
from buildkit_testing.artifacts import only_wheel, sha256
from buildkit_testing.cuda import CUDA_MINIMAL_ARCH_VAR, cuda_build
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, setup_py
from buildkit_testing.venvs import overlay_venv, site_packages

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups, /proc, RLIMIT_FSIZE")]

EPOCH = "1700000000"
INTERRUPTED = "interrupted; rerun the same command"

PAUSE_SH = """#!/bin/sh
# pause.sh POINT: when POINT is armed, claim it, say so, and wait to be released or killed.
F={faults}
if mv "$F/armed-$1" "$F/fired-$1" 2>/dev/null; then
  : > "$F/paused-$1"
  i=0
  while [ ! -e "$F/release-$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
fi
exit 0
"""
LAUNCHER_SH = """#!/bin/sh
case "$*" in *python_bindings.cpp*) {faults}/pause.sh compile ;; esac
exec "$@"
"""
PROJECT_CMAKE = """# tests/test_faults.py: pause points, inert until armed.
execute_process(COMMAND [[{faults}/pause.sh]] configure)
install(SCRIPT [[{faults}/install-start.cmake]])
cmake_language(DEFER CALL install SCRIPT [[{faults}/install-end.cmake]])
"""
INSTALL_CMAKE = "execute_process(COMMAND [[{faults}/pause.sh]] {point})\n"
PY_HOOK = '''"""tests/test_faults.py: pause points in Python, loaded only when FAULT_DIR is set."""
import os
import time
from pathlib import Path

FAULTS = Path(os.environ["FAULT_DIR"])


def pause(point):
    try:
        os.rename(FAULTS / f"armed-{point}", FAULTS / f"fired-{point}")
    except FileNotFoundError:
        return
    (FAULTS / f"paused-{point}").touch()
    deadline = time.monotonic() + 60
    while not (FAULTS / f"release-{point}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


from buildkit.package import wheel_zip

_add_whole = wheel_zip._Writer.add_whole


def add_whole(self, *args, **kwargs):
    _add_whole(self, *args, **kwargs)
    self._fault_files = getattr(self, "_fault_files", 0) + 1
    if self._fault_files == 3:
        pause("wheel")


wheel_zip._Writer.add_whole = add_whole
_replace = os.replace


def replace(src, dst, *args, **kwargs):
    if str(dst).endswith("develop.json"):
        pause("develop-state")
    return _replace(src, dst, *args, **kwargs)


os.replace = replace
'''


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="module")
def faults(base) -> Path:
    folder = base / "hooks"
    folder.mkdir()
    for name, text in (("pause.sh", PAUSE_SH), ("launcher.sh", LAUNCHER_SH)):
        (folder / name).write_text(text.format(faults=folder))
        (folder / name).chmod(0o755)
    (folder / "project.cmake").write_text(PROJECT_CMAKE.format(faults=folder))
    for point in ("install-start", "install-end"):
        (folder / f"{point}.cmake").write_text(INSTALL_CMAKE.format(faults=folder, point=point))
    return folder


@pytest.fixture(scope="module")
def python(base) -> Path:
    """An overlay venv (see buildkit_testing.venvs.overlay_venv) with the Python pause points."""
    python = overlay_venv(base / "venv")
    site = site_packages(python)
    (site / "_buildkit_fault_hook.py").write_text(PY_HOOK)
    # After _buildkit_test_overlay.pth (alphabetical order), which makes wheel importable.
    (site / "zz_buildkit_fault_hook.pth").write_text(
        "import os; exec('import _buildkit_fault_hook') if os.environ.get('FAULT_DIR') else None\n")
    return python


@pytest.fixture(scope="module")
def env(faults) -> dict[str, str]:
    """One environment for every build here, the reference builds included."""
    return clean_env(CI="true", MAX_JOBS="2", SOURCE_DATE_EPOCH=EPOCH, FAULT_DIR=str(faults),
                     BUILDKIT_COMPILER_LAUNCHER=str(faults / "launcher.sh"),
                     CMAKE_PROJECT_INCLUDE=str(faults / "project.cmake"))


@pytest.fixture(scope="module")
def project(base) -> Path:
    """The one folder every build here runs in."""
    return base / "minimal"


@pytest.fixture(scope="module")
def fresh(project, test_package) -> Callable[[], Path]:
    """Makes the one build folder a fresh copy of tests/packages/minimal."""

    def refresh() -> Path:
        shutil.rmtree(project, ignore_errors=True)
        return test_package("minimal", project)

    return refresh


@pytest.fixture(scope="module")
def reference(project, python, env, base, fresh) -> dict[str, dict[str, str]]:
    """A clean build's installed files ("tree") and wheel members ("wheel"), and a copy
    of the folder after the clean ``setup.py develop`` (restore with :func:`restore`)."""
    fresh()
    setup_py(python, project, "develop", env=env)
    tree = installed_files(project)
    shutil.copytree(project, base / "developed", symlinks=True)
    setup_py(python, project, "bdist_wheel", "--dist-dir", "dist", env=env)  # the same as from a fresh copy
    return {"tree": tree, "wheel": wheel_members(only_wheel(project / "dist"))}


@pytest.fixture(autouse=True)
def disarmed(faults):
    """No armed, fired, paused or released marks left from an earlier test."""
    for path in faults.iterdir():
        if path.name.startswith(("armed-", "fired-", "paused-", "release-")):
            path.unlink()


# ------------------------------------------------------------------- helpers

def restore(project: Path, reference, *edited: str) -> None:
    """The folder as the clean ``setup.py develop`` left it (mtimes kept: a no-op for
    ninja), then the ``edited`` files touched."""
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(project.parent / "developed", project, symlinks=True)
    for name in edited:
        os.utime(project / name)


def installed_files(project: Path, package_name: str = "minimal") -> dict[str, str]:
    """Relative path -> sha256 of what CMake installed into the package, and the _C stub."""
    package = project / package_name
    files = [p for sub in ("lib", "include", "share") for p in (package / sub).rglob("*")]
    files += package.glob("_C*.so")
    return {str(p.relative_to(project)): (f"-> {os.readlink(p)}" if p.is_symlink() else sha256(p))
            for p in sorted(files) if p.is_symlink() or p.is_file()}


def wheel_members(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        return {info.filename: hashlib.sha256(archive.read(info)).hexdigest() for info in archive.infolist()}


def arm(faults: Path, point: str) -> None:
    (faults / f"armed-{point}").touch()


class Build:
    """A build in its own session (process group), its output going to files."""

    def __init__(self, command, cwd: Path, env: dict[str, str], logs: Path, name: str):
        logs.mkdir(parents=True, exist_ok=True)
        self.stdout_path, self.stderr_path = logs / f"{name}.out", logs / f"{name}.err"
        with open(self.stdout_path, "w") as out, open(self.stderr_path, "w") as err:
            self.proc = subprocess.Popen([str(c) for c in command], cwd=cwd, env=env, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    @property
    def output(self) -> str:
        return self.stdout_path.read_text(errors="replace") + self.stderr

    def wait_for(self, mark: Path, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not mark.exists():
            if self.proc.poll() is not None:
                pytest.fail(f"the build ended ({self.proc.returncode}) before {mark.name}:\n{self.output[-4000:]}")
            if time.monotonic() > deadline:
                self.kill_session()
                pytest.fail(f"no {mark.name} after {timeout} s:\n{self.output[-4000:]}")
            time.sleep(0.02)

    def wait_for_text(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.stderr:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{text!r} never came:\n{self.output[-4000:]}")
            time.sleep(0.02)

    def kill_group(self, sig: int) -> None:
        """Signal the build's process group, as Ctrl-C (SIGINT) or ``kill -9 -PGID`` would."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def kill_session(self) -> None:
        """SIGKILL whatever is left of the build's session.  ninja starts each job in a
        process group of its own and passes an interrupt on to them, but a SIGKILLed
        ninja can't: its running jobs carry on as orphans.  The tests kill those too, as
        closing the terminal or an OOM-killed container would, so a rerun never races them."""
        for pid in _session_members(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def finish(self, timeout: float = 300) -> int:
        """The exit status, once every process of the build's session is gone: no
        compiler of an interrupted build may outlive it."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_session()
            pytest.fail(f"the build did not end within {timeout} s:\n{self.output[-4000:]}")
        deadline = time.monotonic() + 10
        while _session_members(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        left = [_command_line(pid) for pid in _session_members(self.proc.pid)]
        self.kill_session()
        assert not left, f"processes of the build outlived it by 10 s: {left}"
        return code


def _session_members(sid: int) -> list[int]:
    """Live (not zombie) processes of a session."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, session, ...
        if int(fields[3]) == sid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:300]
    except OSError:
        return str(pid)


def assert_clean_exit(text: str) -> None:
    assert "Traceback" not in text, text[-4000:]


# ------------------------------------------------- 1. interrupted builds

SOURCES = ("csrc/minimal.cpp", "csrc/python_bindings.cpp")
# point -> (files edited since the clean build, or None for a fresh copy; command; hook to arm)
POINTS = {
    "configure": (None, "develop", "configure"),  # the first build's configure
    "regenerate": (("CMakeLists.txt",), "develop", "configure"),  # the configure ninja starts
    "compile": (SOURCES, "develop", "compile"),
    "install-start": (SOURCES, "develop", "install-start"),  # nothing copied yet
    "install-end": (SOURCES, "develop", "install-end"),  # all copied, nothing recorded
    "wheel": ((), "bdist_wheel", "wheel"),  # three files in the archive
}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
@pytest.mark.parametrize("point", list(POINTS))
def test_interrupted_build_reruns_to_a_clean_builds_files(point, sig, project, fresh, python, env, faults, reference,
                                                          tmp_path):
    edited, command, hook = POINTS[point]
    if edited is None:
        fresh()
    else:
        restore(project, reference, *edited)
    args = [command] + (["--dist-dir", "dist"] if command == "bdist_wheel" else [])
    arm(faults, hook)
    build = Build([python, "setup.py", *args], project, env, tmp_path, "interrupted")
    build.wait_for(faults / f"paused-{hook}")
    build.kill_group(sig)
    if sig == signal.SIGKILL:
        build.kill_session()
    code = build.finish()
    assert code != 0
    if sig == signal.SIGINT:
        assert_clean_exit(build.output)
        # During the build buildkit's handler answers; setuptools' own one ("interrupted",
        # exit 1) answers for an interrupt in its commands.
        assert (INTERRUPTED in build.stderr and code == 130) if command == "develop" else "interrupted" in build.stderr
    if command == "bdist_wheel":
        assert not list((project / "dist").glob("*.whl"))  # nothing half-written where a wheel is looked for

    rerun = setup_py(python, project, *args, env=env)
    assert_clean_exit(rerun.stdout + rerun.stderr)
    if command == "bdist_wheel":
        assert wheel_members(only_wheel(project / "dist")) == reference["wheel"]
    assert installed_files(project) == reference["tree"]


def test_install_killed_mid_copy_is_redone(project, python, env, reference):
    """`cmake --install` writes a file in place and dates it like its source afterwards
    (strace: open(O_TRUNC), write, utimensat), so one killed while being copied is cut
    short and dated now; CMake takes a file dated within a second of its source for up to
    date, whatever its size (a library's RPATH_CHECK catches it, a plain file nothing).
    This is that state, right after a quick build: the rerun must copy the file again."""
    restore(project, reference)
    build_dir = build_folder(project)
    source = build_dir / "MinimalConfig.cmake"  # made at configure
    installed = project / "minimal" / "share" / "cmake" / "Minimal" / "MinimalConfig.cmake"
    installed.write_bytes(installed.read_bytes()[:100])
    dated = source.stat().st_mtime_ns + 300_000_000
    os.utime(installed, ns=(dated, dated))
    records = list((build_dir / ".buildkit").glob("install-*.record"))
    assert len(records) == 1, records  # one prefix: the package tree
    # What buildkit leaves while an install runs: the marker beside the prefix's record.
    (build_dir / ".buildkit" / records[0].name.replace("install-", "install-pending-")).with_suffix("").touch()
    result = setup_py(python, project, "develop", env=env)
    assert "installing" in result.stderr
    assert installed_files(project) == reference["tree"]


# -------------------------------------------------- 2. two builds at once

def test_two_builds_at_once_take_turns(project, python, env, faults, reference, tmp_path):
    restore(project, reference, *SOURCES)
    arm(faults, "compile")
    first = Build([python, "setup.py", "develop"], project, env, tmp_path, "first")
    first.wait_for(faults / "paused-compile")  # holds the build folder's lock, mid-compile
    second = Build([python, "setup.py", "develop"], project, env, tmp_path, "second")
    second.wait_for_text("waiting for another build")
    (faults / "release-compile").touch()
    assert first.finish() == 0, first.output[-4000:]
    assert second.finish() == 0, second.output[-4000:]
    err = " ".join(second.stderr.split())
    assert f"waiting for another build in {build_folder(project)} (pid {first.proc.pid})" in err
    assert_clean_exit(first.output + second.output)
    assert installed_files(project) == reference["tree"]
    total = run([python, "-c", "import minimal; print(minimal.sum([1, 2, 3.5]))"], cwd="/", env=env).stdout
    assert total.strip() == "6.5"


def test_a_build_waits_for_another_commands_packaging_too(project, python, env, faults, reference, tmp_path):
    """The lock covers the whole command, not only its CMake part: a `setup.py develop`
    started while a `bdist_wheel` in the same folder is writing its archive (CMake long
    done) waits for it, and both end as clean builds would."""
    restore(project, reference)
    arm(faults, "wheel")
    first = Build([python, "setup.py", "bdist_wheel", "--dist-dir", "dist"], project, env, tmp_path, "wheel")
    first.wait_for(faults / "paused-wheel")  # in setuptools' part: three files into the archive
    second = Build([python, "setup.py", "develop"], project, env, tmp_path, "develop")
    second.wait_for_text("waiting for another build")
    assert second.proc.poll() is None  # still waiting while the wheel is being written
    (faults / "release-wheel").touch()
    assert first.finish() == 0, first.output[-4000:]
    assert second.finish() == 0, second.output[-4000:]
    assert f"(pid {first.proc.pid})" in " ".join(second.stderr.split())
    assert_clean_exit(first.output + second.output)
    assert wheel_members(only_wheel(project / "dist")) == reference["wheel"]
    assert installed_files(project) == reference["tree"]


# ------------------------------------------------------ 3. damaged cache

def _cut_in_value(data: bytes) -> bytes:
    marker = b"\nCMAKE_BUILD_TYPE:STRING=Rel"  # "Release" cut short: the line still parses
    return data[:data.index(marker) + len(marker)]


def _binary_garbage(data: bytes) -> bytes:
    return random.Random(1).randbytes(4096) + b"\n"


def _garbage_block(data: bytes) -> bytes:
    """Whole lines in the middle overwritten by one line of 512 random bytes. Without '='
    (CMake reads `anything=value` as an entry), comment marks, line breaks or NUL (CMake
    reads a line up to its first NUL), no part of it can pass for an entry."""
    start = data.index(b"\n", len(data) // 2) + 1
    end = data.index(b"\n", start + 512)
    noise = bytes(b for b in random.Random(2).randbytes(4096) if b not in b"=#/\n\r\0")[:512]
    return data[:start] + noise + data[end:]


DAMAGE = {
    "truncated-mid-value": (_cut_in_value, "CMakeCache.txt is truncated"),
    "binary-garbage": (_binary_garbage, "CMakeCache.txt is unreadable (line "),
    "garbage-block": (_garbage_block, "CMakeCache.txt is unreadable (line "),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_cache_is_named_and_reconfigured(damage, project, python, env, reference):
    restore(project, reference)
    cache = build_folder(project) / "CMakeCache.txt"
    damaged, reason = DAMAGE[damage]
    cache.write_bytes(damaged(cache.read_bytes()))
    result = setup_py(python, project, "develop", env=env)
    err = " ".join(result.stderr.split())
    assert reason in err and "reconfiguring from scratch" in err, err
    assert_clean_exit(result.stdout + result.stderr)
    assert installed_files(project) == reference["tree"]
    again = setup_py(python, project, "develop", env=env)
    assert "configuring" not in again.stderr and "up to date" in again.stderr


# ------------------------------------------------- 4. tools that vanish

def test_vanished_ninja_reconfigures_naming_it(project, fresh, python, env, reference, tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    shutil.copy2(toolchain.find_ninja().path, tools / "ninja")
    path_env = {**env, "PATH": f"{tools}{os.pathsep}{env['PATH']}"}
    fresh()
    setup_py(python, project, "develop", env=path_env)
    assert json.loads((build_folder(project) / ".buildkit" / "toolchain.json").read_text())["ninja"]["path"] \
        == str(tools / "ninja")
    (tools / "ninja").unlink()

    result = setup_py(python, project, "develop", env=path_env)
    err = " ".join(result.stderr.split())
    assert f"the build program CMake recorded, {tools / 'ninja'}, no longer exists" in err
    assert f"ninja {tools / 'ninja'} (version" in err and "recorded at configure is gone" in err
    assert_clean_exit(result.stdout + result.stderr)
    assert installed_files(project) == reference["tree"]


def _compiler_links(tmp_path: Path, **names: str) -> Path:
    """A folder of symbolic links to the system's compilers: name=target."""
    folder = tmp_path / "compilers"
    folder.mkdir()
    for name, target in names.items():
        (folder / name).symlink_to(shutil.which(target))
    return folder


def test_vanished_compilers_found_on_path_reconfigure(project, fresh, python, env, reference, tmp_path):
    # cc and c++ come first on PATH (CMake looks for c++ next to the C compiler first).
    folder = _compiler_links(tmp_path, **{"cc": "gcc", "c++": "g++"})
    path_env = {**env, "PATH": f"{folder}{os.pathsep}{env['PATH']}"}
    fresh()
    setup_py(python, project, "develop", env=path_env)
    cache = build_folder(project) / "CMakeCache.txt"
    assert f"CMAKE_CXX_COMPILER:FILEPATH={folder / 'c++'}\n" in cache.read_text()
    shutil.rmtree(folder)  # the toolchain was uninstalled

    result = setup_py(python, project, "develop", env=path_env)
    err = " ".join(result.stderr.split())
    assert f"C++ compiler {folder / 'c++'} (version" in err and f"C compiler {folder / 'cc'} (version" in err
    assert "recorded at configure is gone" in err
    assert_clean_exit(result.stdout + result.stderr)
    assert str(folder) not in cache.read_text()
    assert installed_files(project) == reference["tree"]


def test_vanished_compiler_named_by_cxx_is_a_clear_error(project, fresh, python, env, reference, tmp_path):
    cxx = _compiler_links(tmp_path, **{"g++": "g++"}) / "g++"
    fresh()
    setup_py(python, project, "develop", env={**env, "CXX": str(cxx)})
    cxx.unlink()

    result = setup_py(python, project, "develop", check=False, env={**env, "CXX": str(cxx)})
    assert result.returncode == 1
    assert_clean_exit(result.stdout + result.stderr)
    err = " ".join(result.stderr.replace("|", " ").split())  # the plain-mode box
    assert f"C++ compiler {cxx} (version" in err and "recorded at configure is gone" in err
    assert f"The C++ compiler {cxx} this build folder was configured with no longer exists, and CXX={cxx} " \
           "still names it: install it again, or set CXX to an installed compiler (or unset it)" in err

    fixed = setup_py(python, project, "develop", env=env)  # CXX unset: the compiler found on PATH
    assert_clean_exit(fixed.stdout + fixed.stderr)
    assert installed_files(project) == reference["tree"]


# ---------------------------------------------------- 5. disk full

def test_full_disk_while_writing_the_wheel_leaves_no_partial_wheel(project, fresh, python, env):
    fresh()
    # Two incompressible 150 KB headers: every file fits under the limit, a wheel with both doesn't.
    rng = random.Random(0)
    for name in ("blob_a.h", "blob_b.h"):
        (project / "include" / "minimal" / name).write_bytes(rng.randbytes(150_000))
    limit = 256 * 1024
    setup_py(python, project, "build_ext", env=env)  # the CMake build, without the limit

    def cap_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    dist = project / "dist"
    result = setup_py(python, project, "bdist_wheel", "--dist-dir", dist, env=env, check=False,
                      preexec_fn=cap_file_size)
    assert result.returncode == 1
    err = " ".join(result.stderr.replace("|", " ").split())  # the plain-mode box
    assert "Building the wheel ran out of space: [Errno 27] File too large" in err, result.stderr[-3000:]
    assert f"no partial wheel was left in {dist}" in err
    assert_clean_exit(result.stdout + result.stderr)
    assert list(dist.iterdir()) == []  # neither a partial .whl nor the staging folder

    setup_py(python, project, "bdist_wheel", "--dist-dir", dist, env=env)
    assert only_wheel(dist).stat().st_size > limit


# ------------------------------------------ 6. interrupted `buildkit develop`

def _state(project: Path) -> Path:
    return build_folder(project) / ".buildkit" / "develop.json"


def _develop_cli(python: Path, project: Path, env: dict[str, str]):
    result = run([python, "-m", "buildkit", "develop", project], env=env, timeout=300)
    assert_clean_exit(result.stdout + result.stderr)
    return result


def test_interrupted_buildkit_develop_compile(project, python, env, faults, reference, tmp_path):
    restore(project, reference, *SOURCES)
    old = _state(project).read_text()
    arm(faults, "compile")
    build = Build([python, "-m", "buildkit", "develop", project], project, env, tmp_path, "develop")
    build.wait_for(faults / "paused-compile")
    build.kill_group(signal.SIGINT)
    assert build.finish() == 130
    assert INTERRUPTED in build.stderr
    assert_clean_exit(build.output)
    assert _state(project).read_text() == old

    _develop_cli(python, project, env)
    assert json.loads(_state(project).read_text())["inputs"]
    assert installed_files(project) == reference["tree"]
    no_op = _develop_cli(python, project, env)
    assert "up to date" in no_op.stderr and "running" not in no_op.stdout  # setuptools not run again


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_buildkit_develop_state_write(sig, project, python, env, faults, reference, tmp_path):
    """Stopped right before develop.json is replaced: the old state stays whole, and the
    rerun registers again and writes the new one."""
    restore(project, reference)
    _develop_cli(python, project, env)
    old = _state(project).read_text()
    with open(project / "setup.py", "a") as handle:  # an input of the registration changes
        handle.write("# edited\n")
    arm(faults, "develop-state")
    build = Build([python, "-m", "buildkit", "develop", project], project, env, tmp_path, "develop")
    build.wait_for(faults / "paused-develop-state")
    build.kill_group(sig)
    if sig == signal.SIGKILL:
        build.kill_session()
    code = build.finish()
    assert code == (1 if sig == signal.SIGINT else -signal.SIGKILL)
    if sig == signal.SIGINT:  # inside setuptools' develop command: its handler answers
        assert "interrupted" in build.stderr
        assert_clean_exit(build.output)
    assert _state(project).read_text() == old

    _develop_cli(python, project, env)
    new = json.loads(_state(project).read_text())
    assert new["inputs"] != json.loads(old)["inputs"]
    assert installed_files(project) == reference["tree"]
    no_op = _develop_cli(python, project, env)
    assert "up to date" in no_op.stderr and "running" not in no_op.stdout


def test_missing_compiler_named_by_cxx_is_caught_before_configure(test_package):
    minimal_project = test_package("minimal")
    result = run([sys.executable, "-m", "buildkit", "build", minimal_project],
                 env=clean_env(CXX="/nonexistent/bin/g++"), check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "CXX='/nonexistent/bin/g++' names a compiler that does not exist" in result.stderr
    assert not (build_folder(minimal_project) / "CMakeCache.txt").exists()


def test_changing_cxx_reconfigures_from_scratch(test_package, tmp_path):
    minimal_project = test_package("minimal")
    run([sys.executable, "-m", "buildkit", "build", minimal_project], env=clean_env())
    wrapper = tmp_path / "g++-wrapper"
    wrapper.write_text(f"#!/bin/sh\nexec {shutil.which('g++')} \"$@\"\n")
    wrapper.chmod(0o755)
    result = run([sys.executable, "-m", "buildkit", "build", minimal_project], env=clean_env(CXX=str(wrapper)))
    assert "environment CXX changed" in result.stderr
    assert str(wrapper) in (build_folder(minimal_project) / "CMakeCache.txt").read_text()


# ------------------------------- 7. nvcc interrupted (tests/packages/cuda_minimal)

# nvcc runs its host compiler, gcc found on PATH, for each of its steps.  The launcher
# puts host-gcc.sh first on PATH for nvcc's compile of saxpy_cuda.cu, and host-gcc.sh
# pauses nvcc's last step (the host compile of what cudafe++ made; cicc and ptxas have
# run, their intermediates are in the object folder: CMake passes -objtemp): nvcc itself
# is running, waiting for it, when the signal comes.
NVCC_LAUNCHER_SH = """#!/bin/sh
case "$*" in *saxpy_cuda.cu*) PATH={faults}/nvcc-host:$PATH; export PATH ;; esac
exec "$@"
"""
HOST_GCC_SH = """#!/bin/sh
case " $* " in *" -c "*) {faults}/pause.sh nvcc ;; esac
exec {gcc} "$@"
"""


@pytest.fixture(scope="module")
def cuda_env(env, faults) -> dict[str, str]:
    """``env`` with the nvcc pause point, for one architecture (nvcc time is what this costs)."""
    host = faults / "nvcc-host"
    host.mkdir()
    (host / "gcc").write_text(HOST_GCC_SH.format(faults=faults, gcc=shutil.which("gcc", path=env["PATH"])))
    (faults / "nvcc-launcher.sh").write_text(NVCC_LAUNCHER_SH.format(faults=faults))
    for script in (host / "gcc", faults / "nvcc-launcher.sh"):
        script.chmod(0o755)
    return {**env, CUDA_MINIMAL_ARCH_VAR: "8.0", "BUILDKIT_COMPILER_LAUNCHER": str(faults / "nvcc-launcher.sh")}


@pytest.fixture(scope="module")
def cuda_folder(base) -> Path:
    """The one folder every CUDA build here runs in; :func:`restore` finds the clean
    build's copy next to it, in ``cuda/developed``."""
    return base / "cuda" / "cuda_minimal"


@pytest.fixture(scope="module")
def cuda_reference(cuda_folder, python, cuda_env, test_package) -> dict[str, str]:
    """A clean ``setup.py develop``'s installed files, and a copy of its folder."""
    shutil.rmtree(cuda_folder.parent, ignore_errors=True)
    test_package("cuda_minimal", cuda_folder)
    setup_py(python, cuda_folder, "develop", env=cuda_env)
    tree = installed_files(cuda_folder, "cuda_minimal")
    assert "cuda_minimal/lib/libcuda_minimal.so" in tree and any("/_C" in name for name in tree), tree
    shutil.copytree(cuda_folder, cuda_folder.parent / "developed", symlinks=True)
    return tree


@cuda_build
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_nvcc_compile_reruns_to_a_clean_builds_files(sig, cuda_folder, python, cuda_env, faults,
                                                                 cuda_reference, tmp_path):
    restore(cuda_folder, cuda_reference, "csrc/saxpy_cuda.cu")
    arm(faults, "nvcc")
    build = Build([python, "setup.py", "develop"], cuda_folder, cuda_env, tmp_path, "interrupted")
    build.wait_for(faults / "paused-nvcc")
    running = [_command_line(pid) for pid in _session_members(build.proc.pid)]
    assert any(Path(line.split(" ", 1)[0]).name == "nvcc" for line in running), running  # mid-compile
    build.kill_group(sig)
    if sig == signal.SIGKILL:
        build.kill_session()
    code = build.finish()
    if sig == signal.SIGINT:
        assert code == 130 and INTERRUPTED in build.stderr, build.output[-4000:]
        assert_clean_exit(build.output)
    else:
        assert code == -signal.SIGKILL

    rerun = setup_py(python, cuda_folder, "develop", env=cuda_env)
    assert_clean_exit(rerun.stdout + rerun.stderr)
    assert installed_files(cuda_folder, "cuda_minimal") == cuda_reference
    # The killed nvcc's intermediates (saxpy_cuda.cu.o.ptx, .cubin, .fatbin.c, ...) are
    # left in the object folder; the rerun's nvcc writes and removes the same names.
    objects = build_folder(cuda_folder) / "CMakeFiles" / "cuda_minimal.dir" / "csrc"
    assert sorted(p.name for p in objects.glob("saxpy_cuda.cu.o*")) == ["saxpy_cuda.cu.o"]
