from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from buildkit.builder.toolchain import tools as toolchain
from buildkit.builder.toolchain.tools import (
    Compilers,
    Tool,
    Toolchain,
    check_record,
    find_cmake,
    find_compilers,
    find_ninja,
    load_recorded,
    missing_build_tools,
    pypi_binary,
    record,
    record_path,
    version_at_least,
    version_from_output,
)
from buildkit.errors import ToolchainError


def discover(*, cmake_minimum: str = "3.24", ninja: bool = True, cuda: bool = False, cc: str | None = None,
             cxx: str | None = None, cudacxx: str | None = None, cache_path: Path | str | None = None) -> Toolchain:
    """Everything a first configure needs, as the driver finds it."""
    return Toolchain(cmake=find_cmake(cmake_minimum, cache_path=cache_path),
                     ninja=find_ninja(cache_path=cache_path) if ninja else None,
                     compilers=find_compilers(cuda, cc=cc, cxx=cxx, cudacxx=cudacxx, cache_path=cache_path))


def is_script(path: Path) -> bool:
    return path.read_bytes()[:2] == b"#!"


def fake_tool(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(exist_ok=True)
    script = directory / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "toolchain-cache.json"


@pytest.mark.parametrize("find", [find_cmake, find_ninja])
def test_finds_real_binaries(find, cache: Path) -> None:
    tool = find(cache_path=cache)
    assert tool.path.is_absolute() and tool.path.is_file()
    assert not is_script(tool.path), "wrappers cost a process start per call"
    out = subprocess.run([str(tool.path), "--version"], capture_output=True, text=True, check=True).stdout
    assert tool.version in out
    assert re.fullmatch(r"\d+\.\d+(\.\d+)*", tool.version)


@pytest.mark.parametrize("name", ["cmake", "ninja"])
def test_pypi_binary_is_the_package_binary(name: str) -> None:
    module = pytest.importorskip(name)
    directory = module.CMAKE_BIN_DIR if name == "cmake" else module.BIN_DIR
    binary = pypi_binary(name)
    assert binary == (Path(directory) / name).resolve()
    assert not is_script(binary)


def test_warm_cache_starts_no_subprocess(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = discover(cuda=True, cache_path=cache)
    assert cache.is_file()
    started = toolchain.probe_count

    def no_subprocess(*args, **kwargs):
        raise AssertionError(f"subprocess started with a warm cache: {args}")

    monkeypatch.setattr(toolchain.subprocess, "run", no_subprocess)
    assert discover(cuda=True, cache_path=cache) == first
    assert check_record(first.to_record(), cache_path=cache) == []
    assert toolchain.probe_count == started
    assert [p.name for p in cache.parent.iterdir()] == [cache.name], "written atomically, no temp files left"


@pytest.mark.parametrize("content", ["{broken", '{"format": 1, "entries": {"cmake:/x": 3}}',
                                     '{"format": 1, "entries": "nope"}', "[]"])
def test_corrupt_cache_is_ignored(cache: Path, content: str) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text(content)
    assert find_cmake(cache_path=cache).path.is_file()
    assert json.loads(cache.read_text())["format"] == 1


def test_changed_tool_is_probed_again(fake_bin: Path, cache: Path) -> None:
    script = fake_tool(fake_bin, "ninja", "echo 1.12.0")
    tool = find_ninja(cache_path=cache)
    assert (tool.path, tool.version) == (script, "1.12.0"), "a wrapper we cannot see through is kept"
    fake_tool(fake_bin, "ninja", "echo 1.12.1  # longer")
    assert find_ninja(cache_path=cache).version == "1.12.1"


def test_check_record_reports_changed_and_missing_tools(fake_bin: Path, cache: Path, tmp_path: Path) -> None:
    fake_tool(fake_bin, "ninja", "echo 1.12.0")
    chain = Toolchain(find_cmake(cache_path=cache), find_ninja(cache_path=cache))
    build = tmp_path / "build"
    record(build, chain)
    recorded = json.loads(record_path(build).read_text())
    assert check_record(recorded, cache_path=cache) == []

    fake_tool(fake_bin, "ninja", "echo 1.13.0  # upgraded")
    [reason] = check_record(recorded, cache_path=cache)
    assert "ninja" in reason and "1.12.0 to 1.13.0" in reason

    fake_tool(fake_bin, "ninja", "echo 1.12.0 ")  # same version, different file
    [reason] = check_record(recorded, cache_path=cache)
    assert "replaced" in reason

    (fake_bin / "ninja").unlink()
    [reason] = check_record(recorded, cache_path=cache)
    assert "gone" in reason


def test_forwarding_wrapper_is_followed(fake_bin: Path, cache: Path) -> None:
    real = find_ninja(cache_path=cache)
    fake_tool(fake_bin, "ninja", f'exec "{real.path}" "$@"')
    assert find_ninja(cache_path=cache).path == real.path


def test_old_system_cmake_falls_back_to_pypi(fake_bin: Path, cache: Path) -> None:
    pytest.importorskip("cmake")
    fake_tool(fake_bin, "cmake", 'echo "cmake version 3.10.0"')
    tool = find_cmake("3.24", cache_path=cache)
    assert tool.path == pypi_binary("cmake")
    assert version_at_least(tool.version, "3.24")


def test_too_old_everywhere_says_what_to_do(cache: Path) -> None:
    with pytest.raises(ToolchainError) as info:
        find_cmake("99.0", cache_path=cache)
    assert "pip install 'cmake>=99.0'" in str(info.value)


def test_record_round_trip(tmp_path: Path, cache: Path) -> None:
    chain = discover(cache_path=cache)
    record(tmp_path, chain)
    assert load_recorded(tmp_path) == chain
    assert sorted(p.name for p in record_path(tmp_path).parent.iterdir()) == ["toolchain.json"], "no temp files"


@pytest.mark.parametrize("content", [None, "{not json", '{"format": 99}', '{"format": 1, "cmake": {"path": 1}}'])
def test_unreadable_record_means_none(tmp_path: Path, content: str | None) -> None:
    if content is not None:
        record_path(tmp_path).parent.mkdir(parents=True)
        record_path(tmp_path).write_text(content)
    assert load_recorded(tmp_path) is None
    if content is not None and content.startswith("{\""):
        assert "cannot be read" in check_record(json.loads(content))[0]


def test_find_compilers(cache: Path) -> None:
    compilers = find_compilers(cache_path=cache)
    assert compilers.c and compilers.cxx and compilers.nvcc is None
    assert re.fullmatch(r"\d+(\.\d+)+", compilers.cxx.version)
    explicit = find_compilers(cc=f"{compilers.c.path} -m64", cache_path=cache)
    assert explicit.c == compilers.c


def test_missing_requested_compiler_is_an_error(cache: Path) -> None:
    with pytest.raises(ToolchainError, match="CXX='no-such-compiler'"):
        find_compilers(cxx="no-such-compiler", cache_path=cache)


def test_nvcc_is_found_through_its_wrapper(cache: Path) -> None:
    nvcc = find_compilers(cuda=True, cache_path=cache).nvcc
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    assert not is_script(nvcc.path)
    assert re.fullmatch(r"\d+\.\d+", nvcc.version)


@pytest.mark.parametrize("output, version", [
    ("cc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright", "12.2.0"),
    ("Ubuntu clang version 14.0.0-1ubuntu1\nTarget: x86_64", "14.0.0"),
    ("Apple clang version 15.0.0 (clang-1500.0.40.1)", "15.0.0"),
    ("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88", "13.0"),
    ("1.13.2.git.kitware.jobserver-pipe-1\n", "1.13.2"),
    ("cmake version 4.4.4\n\nCMake suite maintained", "4.4.4"),
    ("sccache 0.7.7", "0.7.7"),
    ("no numbers here", None),
])
def test_version_from_output(output: str, version: str | None) -> None:
    assert version_from_output(output) == version


@pytest.mark.parametrize("have, need, ok", [
    ("4.4.4", "3.24", True), ("3.24.0", "3.24", True), ("3.10.0", "3.24", False),
    ("3.31.20241105-g1a2b", "3.31", True), ("1.13.2.git", "1.10", True), ("garbage", "1.0", False),
])
def test_version_at_least(have: str, need: str, ok: bool) -> None:
    assert version_at_least(have, need) is ok


def test_toolchain_record_is_json(tmp_path: Path) -> None:
    tool = Tool("cmake", tmp_path / "cmake", "4.0.0")
    chain = Toolchain(tool, None, Compilers())
    assert Toolchain.from_record(json.loads(json.dumps(chain.to_record()))) == chain
    assert "gone" in check_record(chain.to_record())[0]


def test_a_build_environment_asks_for_cmake_and_ninja_only_where_the_machine_lacks_them(
        session_probe_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # This machine's cmake and ninja (found as a build finds them) meet the defaults: nothing to install.
    assert missing_build_tools("3.24", ninja=True) == []
    # A minimum no cmake here meets: the package index's; ninja only when the generator is Ninja.
    assert missing_build_tools("99.0", ninja=False) == ["cmake>=99.0"]
    # Neither on PATH nor as this interpreter's PyPI package: both asked for.
    monkeypatch.setattr(toolchain, "_locate", lambda program: None)
    monkeypatch.setattr(toolchain, "pypi_binary", lambda name: None)
    assert missing_build_tools("3.24", ninja=True) == ["cmake>=3.24", "ninja>=1.10"]
