"""Compiler and linker flags for extension modules, and the wheel's platform tag.

Everything here is a pure function of its arguments: the options module reads the
environment (``CMAKE_OSX_ARCHITECTURES``, ``ARCHFLAGS``, ``_PYTHON_HOST_PLATFORM``,
``MACOSX_DEPLOYMENT_TARGET``, ...) and passes the values in, so every platform's
branch can be tested from any machine.  The only outside world touched is
``xcrun``, and only when a macOS architecture is requested without a sysroot.
"""

from __future__ import annotations

import platform as _platform
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from packaging.tags import mac_platforms

from buildkit.config.parsing import BUILD_TYPES
from buildkit.errors import ConfigError, ToolchainError

DEBUG_INFO_BUILD_TYPES = frozenset({"Debug", "RelWithDebInfo"})
OSX_ARCHITECTURES = ("arm64", "x86_64")

POSIX_WARNING_FLAGS = (
    "-Wall", "-Wextra", "-Wno-strict-overflow", "-Wno-unused-parameter",
    "-Wno-missing-field-initializers", "-Wno-unknown-pragmas", "-fno-strict-aliasing",
)
WINDOWS_COMPILE_FLAGS = ("/MD", "/FS", "/EHsc")
# The CRT is linked dynamically (/MD); a static LIBCMT pulled in by some import
# library would give two CRTs in one process.
WINDOWS_LINK_FLAGS = ("/NODEFAULTLIB:LIBCMT.LIB",)

# The oldest macOS a wheel can claim per architecture: Apple silicon starts at 11.0,
# and universal2 wheels are tagged by their x86_64 half.
_MIN_MACOS = {"x86_64": (10, 9), "universal2": (10, 9), "arm64": (11, 0)}
_WINDOWS_MACHINES = {"amd64": "win_amd64", "x86_64": "win_amd64", "x86": "win32",
                     "i386": "win32", "i686": "win32", "arm64": "win_arm64", "aarch64": "win_arm64"}


@dataclass(frozen=True)
class ExtensionFlags:
    compile_args: tuple[str, ...]
    link_args: tuple[str, ...]


@dataclass(frozen=True)
class OsxTarget:
    """What to build for on macOS; empty ``architectures`` means the host's own."""

    architectures: tuple[str, ...] = ()
    sysroot: str | None = None
    deployment_target: str | None = None


def _platform_kind(platform: str | None) -> str:
    name = sys.platform if platform is None else platform
    if name.startswith("win"):
        return "win32"
    if name == "darwin":
        return "darwin"
    return "linux" if name.startswith("linux") else name


def normalize_build_type(build_type: str) -> str:
    # CMake compares configuration names case-insensitively, so accept "debug" too.
    for known in BUILD_TYPES:
        if build_type.lower() == known.lower():
            return known
    raise ConfigError(
        f"Unknown build type {build_type!r}.",
        f"Use one of {', '.join(BUILD_TYPES)} (set CMAKE_BUILD_TYPE, or DEBUG=1 / REL_WITH_DEB_INFO=1).",
    )


def relative_rpath_args(path: str, platform: str | None = None) -> list[str]:
    """Linker arguments that make the dynamic loader search ``path``, relative to the
    directory of the library being linked ("." or "" is that directory itself)."""
    kind = _platform_kind(platform)
    if kind == "win32":
        return []  # Windows has no rpath; DLLs are found via os.add_dll_directory.
    rel = posixpath.normpath(path.replace("\\", "/") or ".")
    if posixpath.isabs(rel):
        raise ConfigError(
            f"rpath directory {path!r} is absolute, so the installed package would only "
            "work where it was built.",
            "Give the directory relative to the extension module, e.g. 'lib' or '../lib'.",
        )
    origin = "@loader_path" if kind == "darwin" else "$ORIGIN"
    return [f"-Wl,-rpath,{origin}" if rel == "." else f"-Wl,-rpath,{origin}/{rel}"]


def extension_flags(build_type: str, platform: str | None = None,
                    rpath_dirs: Sequence[str] = ("lib",), osx: OsxTarget | None = None) -> ExtensionFlags:
    """``extra_compile_args`` and ``extra_link_args`` for a Python extension module."""
    build_type = normalize_build_type(build_type)
    kind = _platform_kind(platform)
    if kind == "win32":
        compile_args = list(WINDOWS_COMPILE_FLAGS)
        link_args = list(WINDOWS_LINK_FLAGS)
        if build_type in DEBUG_INFO_BUILD_TYPES:
            # /Z7 keeps debug info in the objects, so parallel compiles don't fight
            # over one .pdb; /DEBUG:FULL then writes a complete .pdb at link time.
            compile_args.append("/Z7")
            link_args.append("/DEBUG:FULL")
        return ExtensionFlags(tuple(compile_args), tuple(link_args))

    debug = {"Debug": ["-O0", "-g"], "RelWithDebInfo": ["-g"]}.get(build_type, [])
    compile_args = [*POSIX_WARNING_FLAGS, *debug]
    link_args = list(debug)
    for directory in rpath_dirs:
        link_args += relative_rpath_args(directory, kind)
    if kind == "darwin" and osx is not None:
        compile_args += osx_compile_args(osx)
        link_args += osx_link_args(osx)
    return ExtensionFlags(tuple(compile_args), tuple(link_args))


def osx_compile_args(osx: OsxTarget) -> list[str]:
    args = [flag for arch in osx.architectures for flag in ("-arch", arch)]
    if osx.sysroot:
        args += ["-isysroot", osx.sysroot]
    return args + _version_min_args(osx)


def osx_link_args(osx: OsxTarget) -> list[str]:
    return [flag for arch in osx.architectures for flag in ("-arch", arch)] + _version_min_args(osx)


def _version_min_args(osx: OsxTarget) -> list[str]:
    return [f"-mmacosx-version-min={osx.deployment_target}"] if osx.deployment_target else []


def osx_target(*, osx_architectures: str | None = None, archflags: str | None = None,
               host_platform: str | None = None, sysroot: str | None = None,
               deployment_target: str | None = None, xcrun: str = "xcrun") -> OsxTarget:
    """Resolve the macOS target from the raw variable values.

    A sysroot is only needed when an architecture is named explicitly; then
    ``sysroot`` (CMAKE_OSX_SYSROOT) wins, else ``xcrun`` is asked for the SDK."""
    archs = target_architectures("darwin", host_platform=host_platform, archflags=archflags,
                                 osx_architectures=osx_architectures)
    if deployment_target:
        _parse_macos_version(deployment_target, "MACOSX_DEPLOYMENT_TARGET")
    if archs and not sysroot:
        sysroot = macos_sdk_path(xcrun)
    return OsxTarget(archs, sysroot or None, deployment_target or None)


def macos_sdk_path(xcrun: str = "xcrun") -> str:
    hint = ("Install the Xcode command line tools (xcode-select --install), or set "
            "CMAKE_OSX_SYSROOT to the macOS SDK path.")
    program = shutil.which(xcrun)
    if program is None:
        raise ToolchainError(f"Cannot find the macOS SDK: '{xcrun}' is not on PATH.", hint)
    result = subprocess.run([program, "--show-sdk-path", "--sdk", "macosx"],
                            capture_output=True, text=True, check=False)
    path = result.stdout.strip()
    if result.returncode != 0 or not path:
        detail = result.stderr.strip() or f"exit status {result.returncode}"
        raise ToolchainError(f"'xcrun --show-sdk-path --sdk macosx' failed ({detail}).", hint)
    return path


def target_architectures(platform: str | None = None, *, host_platform: str | None = None,
                         archflags: str | None = None,
                         osx_architectures: str | None = None) -> tuple[str, ...]:
    """The macOS architectures explicitly asked for, most specific source first:
    CMAKE_OSX_ARCHITECTURES, then ARCHFLAGS, then _PYTHON_HOST_PLATFORM.

    Empty means "the host's own".  Other platforms always give (): there,
    cross-compiling is the toolchain's business, not a compiler flag's."""
    if _platform_kind(platform) != "darwin":
        return ()
    if osx_architectures:
        # CMake lists are ';'-separated, so "arm64;x86_64" is a universal build.
        return _checked_archs(osx_architectures.split(";"), "CMAKE_OSX_ARCHITECTURES")
    if archflags and archflags.strip():
        return _checked_archs(_parse_archflags(archflags), "ARCHFLAGS")
    if host_platform:
        arch = _split_macos_host_platform(host_platform)[1]
        return ("arm64", "x86_64") if arch == "universal2" else (arch,)
    return ()


def _parse_archflags(archflags: str) -> list[str]:
    try:
        tokens = shlex.split(archflags)
    except ValueError:  # unbalanced quotes
        tokens = ["?"]
    if len(tokens) % 2 or any(flag != "-arch" for flag in tokens[::2]):
        raise ConfigError(
            f"ARCHFLAGS={archflags!r} is not a list of '-arch NAME' pairs.",
            "Set it like '-arch arm64' or '-arch arm64 -arch x86_64', or unset it.",
        )
    return tokens[1::2]


def _checked_archs(names: Sequence[str], variable: str) -> tuple[str, ...]:
    archs = tuple(dict.fromkeys(name.strip() for name in names if name.strip()))
    bad = [arch for arch in archs if arch not in OSX_ARCHITECTURES]
    if bad or not archs:
        raise ConfigError(
            f"{variable} names an unsupported macOS architecture: {', '.join(bad) or '(empty)'}.",
            f"Accepted values are {' and '.join(OSX_ARCHITECTURES)} (or both, for a "
            f"universal2 build); unset {variable} to build for this machine.",
        )
    return archs


def _split_macos_host_platform(host_platform: str) -> tuple[str, str]:
    match = re.fullmatch(r"macosx-(\d+(?:\.\d+)*)-(arm64|x86_64|universal2)", host_platform)
    if match is None:
        raise ConfigError(
            f"_PYTHON_HOST_PLATFORM={host_platform!r} is not a macOS target buildkit understands.",
            "Expected 'macosx-VERSION-ARCH' with ARCH arm64, x86_64 or universal2, "
            "e.g. 'macosx-11.0-arm64'.",
        )
    return match.group(1), match.group(2)


def _parse_macos_version(value: str, variable: str) -> tuple[int, int]:
    if not re.fullmatch(r"\d+(\.\d+){0,2}", value.strip()):
        raise ConfigError(f"{variable}={value!r} is not a macOS version.",
                          f"Set {variable} to a version such as 11.0 or 10.15.")
    parts = [int(part) for part in value.strip().split(".")]
    return parts[0], parts[1] if len(parts) > 1 else 0


def wheel_platform_tag(platform: str | None = None, host_platform: str | None = None,
                       archflags: str | None = None, osx_architectures: str | None = None,
                       deployment_target: str | None = None, machine: str | None = None) -> str:
    """The platform part of the wheel's tag, e.g. ``macosx_11_0_arm64`` or ``linux_x86_64``.

    On macOS the version comes from ``deployment_target``, else the version in
    ``host_platform``, raised to the minimum for the architecture.  Pass the
    interpreter's own MACOSX_DEPLOYMENT_TARGET (sysconfig) as ``deployment_target``
    when the variable is unset, so the tag doesn't claim an older macOS than the
    compiler targeted."""
    kind = _platform_kind(platform)
    machine = machine or _platform.machine()
    if kind != "darwin":
        if host_platform:
            return _normalize(host_platform)
        if kind == "win32":
            return _WINDOWS_MACHINES.get(machine.lower(), _normalize(f"win_{machine.lower()}"))
        return _normalize(f"{kind}_{machine}")

    archs = target_architectures(kind, host_platform=host_platform, archflags=archflags,
                                 osx_architectures=osx_architectures)
    if not archs:
        archs = ("arm64",) if machine.lower() in {"arm64", "aarch64"} else (machine,)
    arch = "universal2" if len(archs) > 1 else archs[0]
    if deployment_target:
        version = _parse_macos_version(deployment_target, "MACOSX_DEPLOYMENT_TARGET")
    elif host_platform:
        version = _parse_macos_version(_split_macos_host_platform(host_platform)[0],
                                       "_PYTHON_HOST_PLATFORM")
    else:
        version = (0, 0)
    version = max(version, _MIN_MACOS.get(arch, (10, 9)))
    # packaging knows macOS 11+ wheels are tagged major_0 (11.3 -> 11_0).
    return next(iter(mac_platforms(version, arch)))


def _normalize(name: str) -> str:
    return name.replace("-", "_").replace(".", "_").replace(" ", "_")
