from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buildkit.builder.toolchain.flags import (
    POSIX_WARNING_FLAGS,
    ExtensionFlags,
    OsxTarget,
    extension_flags,
    macos_sdk_path,
    normalize_build_type,
    osx_target,
    relative_rpath_args,
    target_architectures,
    wheel_platform_tag,
)
from buildkit.config.parsing import parse_requirements
from buildkit.errors import BuildkitError, ConfigError, ToolchainError

FAKE_SDK = "/Applications/Xcode.app/SDKs/MacOSX14.sdk"


def fake_xcrun(directory: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory.mkdir(exist_ok=True)
    script = directory / "xcrun"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(directory))
    return script


@pytest.fixture
def xcrun_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "xcrun-args"
    fake_xcrun(tmp_path / "bin", f'echo "$@" > {log}\necho {FAKE_SDK}', monkeypatch)
    return log


# --- build types and the plain POSIX / Windows flags ---------------------------------

@pytest.mark.parametrize("build_type, extra", [
    ("Release", ()), ("MinSizeRel", ()), ("Debug", ("-O0", "-g")), ("RelWithDebInfo", ("-g",)),
])
def test_linux_flags_per_build_type(build_type: str, extra: tuple[str, ...]) -> None:
    flags = extension_flags(build_type, platform="linux")
    assert flags == ExtensionFlags(POSIX_WARNING_FLAGS + extra, extra + ("-Wl,-rpath,$ORIGIN/lib",))
    assert "-Wno-unknown-pragmas" in flags.compile_args and "-fno-strict-aliasing" in flags.compile_args


@pytest.mark.parametrize("build_type, debug", [
    ("Release", False), ("MinSizeRel", False), ("Debug", True), ("RelWithDebInfo", True),
])
def test_windows_flags(build_type: str, debug: bool) -> None:
    flags = extension_flags(build_type, platform="win32", rpath_dirs=("lib", "."))
    assert flags.compile_args == ("/MD", "/FS", "/EHsc") + (("/Z7",) if debug else ())
    assert flags.link_args == ("/NODEFAULTLIB:LIBCMT.LIB",) + (("/DEBUG:FULL",) if debug else ())


def test_flags_are_frozen() -> None:
    with pytest.raises(AttributeError):
        extension_flags("Release", platform="linux").compile_args = ()  # type: ignore[misc]


def test_build_type_is_case_insensitive_and_validated() -> None:
    assert normalize_build_type("relwithdebinfo") == "RelWithDebInfo"
    with pytest.raises(ConfigError, match="RelWithDebInfo"):
        extension_flags("Fast", platform="linux")


def test_default_platform_is_this_one() -> None:
    assert extension_flags("Release") == extension_flags("Release", platform=sys.platform)


# --- rpath -------------------------------------------------------------------------

@pytest.mark.parametrize("platform, path, expected", [
    ("linux", "lib", ["-Wl,-rpath,$ORIGIN/lib"]),
    ("linux", "../torch/lib/", ["-Wl,-rpath,$ORIGIN/../torch/lib"]),
    ("linux", ".", ["-Wl,-rpath,$ORIGIN"]),
    ("linux", "", ["-Wl,-rpath,$ORIGIN"]),
    ("darwin", "lib", ["-Wl,-rpath,@loader_path/lib"]),
    ("darwin", ".", ["-Wl,-rpath,@loader_path"]),
    ("win32", "lib", []),
])
def test_relative_rpath_args(platform: str, path: str, expected: list[str]) -> None:
    assert relative_rpath_args(path, platform) == expected


def test_absolute_rpath_is_rejected() -> None:
    with pytest.raises(ConfigError, match="relative"):
        relative_rpath_args("/usr/lib", "linux")


def test_several_rpath_dirs_in_order() -> None:
    flags = extension_flags("Release", platform="darwin", rpath_dirs=("lib", "."))
    assert flags.link_args == ("-Wl,-rpath,@loader_path/lib", "-Wl,-rpath,@loader_path")


# --- macOS cross-compilation ---------------------------------------------------------

def test_osx_architecture_uses_xcrun_sdk(xcrun_ok: Path) -> None:
    osx = osx_target(osx_architectures="arm64")
    assert osx == OsxTarget(("arm64",), FAKE_SDK, None)
    assert xcrun_ok.read_text().split() == ["--show-sdk-path", "--sdk", "macosx"]
    flags = extension_flags("Release", platform="darwin", osx=osx)
    assert flags.compile_args[-4:] == ("-arch", "arm64", "-isysroot", FAKE_SDK)
    assert flags.link_args[-2:] == ("-arch", "arm64")


def test_explicit_sysroot_skips_xcrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no xcrun anywhere
    osx = osx_target(osx_architectures="x86_64", sysroot="/sdk")
    assert osx == OsxTarget(("x86_64",), "/sdk", None)


def test_no_architecture_needs_no_xcrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    osx = osx_target(deployment_target="11.0")
    flags = extension_flags("Release", platform="darwin", osx=osx)
    assert "-arch" not in flags.compile_args
    assert flags.compile_args[-1] == flags.link_args[-1] == "-mmacosx-version-min=11.0"


def test_missing_xcrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolchainError) as info:
        osx_target(osx_architectures="arm64")
    assert "Xcode command line tools" in str(info.value) and "CMAKE_OSX_SYSROOT" in str(info.value)


def test_failing_xcrun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_xcrun(tmp_path / "bin", "echo 'xcrun: error: SDK cannot be located' >&2\nexit 1", monkeypatch)
    with pytest.raises(BuildkitError) as info:
        macos_sdk_path()
    message = str(info.value)
    assert "SDK cannot be located" in message and "CMAKE_OSX_SYSROOT" in message


def test_unknown_osx_architecture() -> None:
    with pytest.raises(ConfigError) as info:
        osx_target(osx_architectures="ppc", sysroot="/sdk")
    assert "CMAKE_OSX_ARCHITECTURES" in str(info.value)
    assert "arm64" in str(info.value) and "x86_64" in str(info.value)


def test_osx_flags_ignored_off_macos() -> None:
    osx = OsxTarget(("arm64",), "/sdk", "11.0")
    assert extension_flags("Release", platform="linux", osx=osx) == extension_flags("Release", platform="linux")


def test_deployment_target_with_cross_arch(xcrun_ok: Path) -> None:
    osx = osx_target(archflags="-arch arm64 -arch x86_64", deployment_target="10.15")
    flags = extension_flags("Debug", platform="darwin", rpath_dirs=(), osx=osx)
    assert flags.compile_args[len(POSIX_WARNING_FLAGS):] == (
        "-O0", "-g", "-arch", "arm64", "-arch", "x86_64", "-isysroot", FAKE_SDK,
        "-mmacosx-version-min=10.15")
    assert flags.link_args == ("-O0", "-g", "-arch", "arm64", "-arch", "x86_64",
                               "-mmacosx-version-min=10.15")


def test_bad_deployment_target() -> None:
    with pytest.raises(ConfigError, match="MACOSX_DEPLOYMENT_TARGET"):
        osx_target(deployment_target="eleven")


@pytest.mark.parametrize("kwargs, expected", [
    ({}, ()),
    ({"osx_architectures": "arm64"}, ("arm64",)),
    ({"osx_architectures": "arm64;x86_64"}, ("arm64", "x86_64")),
    ({"archflags": "-arch x86_64"}, ("x86_64",)),
    ({"archflags": "-arch arm64 -arch x86_64"}, ("arm64", "x86_64")),
    ({"host_platform": "macosx-11.0-arm64"}, ("arm64",)),
    ({"host_platform": "macosx-10.9-universal2"}, ("arm64", "x86_64")),
    # The explicit CMake variable beats cibuildwheel's.
    ({"osx_architectures": "x86_64", "archflags": "-arch arm64"}, ("x86_64",)),
    ({"archflags": "-arch arm64", "host_platform": "macosx-10.9-x86_64"}, ("arm64",)),
])
def test_target_architectures(kwargs: dict[str, str], expected: tuple[str, ...]) -> None:
    assert target_architectures("darwin", **kwargs) == expected


def test_target_architectures_off_macos() -> None:
    assert target_architectures("linux", archflags="-arch arm64", host_platform="linux-aarch64") == ()


@pytest.mark.parametrize("kwargs, variable", [
    ({"archflags": "-march=native"}, "ARCHFLAGS"),
    ({"archflags": "-arch ppc"}, "ARCHFLAGS"),
    ({"archflags": "-arch 'arm64"}, "ARCHFLAGS"),
    ({"host_platform": "linux-aarch64"}, "_PYTHON_HOST_PLATFORM"),
    ({"osx_architectures": ";"}, "CMAKE_OSX_ARCHITECTURES"),
])
def test_bad_cross_variables(kwargs: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        target_architectures("darwin", **kwargs)


# --- wheel platform tag ---------------------------------------------------------------

@pytest.mark.parametrize("kwargs, expected", [
    ({"platform": "darwin", "host_platform": "macosx-11.0-arm64"}, "macosx_11_0_arm64"),
    ({"platform": "darwin", "host_platform": "macosx-10.9-universal2"}, "macosx_10_9_universal2"),
    ({"platform": "darwin", "archflags": "-arch arm64 -arch x86_64"}, "macosx_10_9_universal2"),
    ({"platform": "darwin", "machine": "x86_64"}, "macosx_10_9_x86_64"),
    ({"platform": "darwin", "machine": "arm64"}, "macosx_11_0_arm64"),
    # Below the architecture's minimum: raised to it.
    ({"platform": "darwin", "osx_architectures": "arm64", "deployment_target": "10.15"},
     "macosx_11_0_arm64"),
    # macOS 11+ tags keep only the major version.
    ({"platform": "darwin", "machine": "arm64", "deployment_target": "14.2"}, "macosx_14_0_arm64"),
    ({"platform": "darwin", "machine": "x86_64", "deployment_target": "10.13"}, "macosx_10_13_x86_64"),
    ({"platform": "darwin", "host_platform": "macosx-10.9-x86_64", "deployment_target": "12"},
     "macosx_12_0_x86_64"),
    ({"platform": "linux", "machine": "x86_64"}, "linux_x86_64"),
    ({"platform": "linux", "machine": "x86_64", "host_platform": "linux-aarch64"}, "linux_aarch64"),
    ({"platform": "win32", "machine": "AMD64"}, "win_amd64"),
    ({"platform": "win32", "machine": "ARM64"}, "win_arm64"),
    ({"platform": "win32", "machine": "x86"}, "win32"),
    ({"platform": "win32", "machine": "AMD64", "host_platform": "win-arm64"}, "win_arm64"),
])
def test_wheel_platform_tag(kwargs: dict[str, str], expected: str) -> None:
    assert wheel_platform_tag(**kwargs) == expected


# --- requirements --------------------------------------------------------------------

def test_extra_requirements_are_split_and_checked() -> None:
    value = "numpy >= 1.24| typing-extensions; python_version < '3.12' |"
    assert parse_requirements(value, "PYTORCH_EXTRA_INSTALL_REQUIREMENTS") == (
        "numpy >= 1.24", "typing-extensions; python_version < '3.12'")
    assert parse_requirements(" | ", "X") == ()


def test_invalid_extra_requirement_names_variable_and_item() -> None:
    with pytest.raises(ConfigError) as info:
        parse_requirements("numpy|not a requirement!!", "EXTRA_REQS")
    assert "EXTRA_REQS" in str(info.value) and "not a requirement!!" in str(info.value)


# --- a real link on this machine -------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux") or not shutil.which("gcc")
                    or not shutil.which("readelf"), reason="needs Linux, gcc and readelf")
def test_rpath_finds_dependency_in_lib(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "dep.c").write_text("int dep_value(void) { return 41; }\n")
    (tmp_path / "main.c").write_text(
        "int dep_value(void);\nint answer(void) { return dep_value() + 1; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", tmp_path / "lib" / "libdep.so",
                    tmp_path / "dep.c"], check=True)
    flags = extension_flags("RelWithDebInfo", platform="linux", rpath_dirs=())
    link = [*flags.link_args, *relative_rpath_args("lib")]
    subprocess.run(["gcc", "-shared", "-fPIC", *flags.compile_args, "-o", tmp_path / "libmain.so",
                    tmp_path / "main.c", f"-L{tmp_path / 'lib'}", "-ldep", *link], check=True)

    dynamic = subprocess.run(["readelf", "-d", tmp_path / "libmain.so"], check=True,
                             capture_output=True, text=True).stdout
    assert any(tag in line and "[$ORIGIN/lib]" in line
               for line in dynamic.splitlines() for tag in ("(RUNPATH)", "(RPATH)"))

    # Load from an unrelated directory with no LD_LIBRARY_PATH: only the rpath can
    # lead the loader to lib/libdep.so.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    code = f"import ctypes; print(ctypes.CDLL({str(tmp_path / 'libmain.so')!r}).answer())"
    out = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "42"
