"""Nothing CMake installs is lost silently, and a wheel's tag follows what it holds.

The failures this guards against were silent: files CMake installed into the package
(a generated file, a data folder, a configured file, a plain shared library) left
out of the wheel because no package-data rule named them, and a wheel whose only
binary is such a library tagged `py3-none-any` with `Root-Is-Purelib: true`.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from setuptools.dist import Distribution

from buildkit.config.modes import WheelMode
from buildkit.frontends.cli.audit import audit
from buildkit.frontends.cli.wheels import dropped_files_problem
from buildkit.frontends.setuptools.commands.build_scripts import BuildScripts
from buildkit.package.contents import binary_format, native_content
from buildkit.package.installed import InstalledFiles, PackageTree, sort_installed
from buildkit.package.layout import PackageDataRule, default_rules
from buildkit.package.links import LinkGuard
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.git import commit_all, git
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run, unboxed
from buildkit_testing.projects import write_files

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to make a shared library")
PLATFORM = sysconfig.get_platform().replace("-", "_").replace(".", "_")
# What tests/packages/installed_files installs, as paths in the wheel.
SHIPPED = {"instfiles/generated.txt", "instfiles/data/x.txt", "instfiles/configured.txt", "instfiles/libplain.so"}
# The installed names a typical .gitignore lists: none of them may keep a file out of the wheel.
GITIGNORE = "*.so\ngenerated.txt\nconfigured.txt\ninstfiles/data/\nbuild/\n"


# --- what becomes of each installed file -------------------------------------------

class Cache:  # the CMake cache, as the rules' conditions read it
    def get_bool(self, name: str) -> bool:
        return False


EXTENSION = f"pkg/_fast{sysconfig.get_config_var('EXT_SUFFIX')}"


def _sorted_tree(tmp_path: Path, mode: WheelMode) -> InstalledFiles:
    """A package-mode tree (CMake installed into pkg/) with one file for each fate."""
    installed = ["pkg/lib/libcore.so", "pkg/lib/libpkg_python.so", "pkg/generated.txt", "pkg/data/x.txt",
                 "pkg/tests/expected.txt", "pkg/include/gated/g.h", "pkg/extra/blob.bin", "pkg/opt/x.txt",
                 EXTENSION, "stray.txt", "toplevel.py", "pkg/__pycache__/m.cpython-311.pyc"]
    write_files(tmp_path, {name: "x" for name in installed})
    rules = (*default_rules(), PackageDataRule(("include/gated/*.h",), when="USE_GATED"),
             PackageDataRule(("extra/*",), modes=frozenset({WheelMode.LIBRARY_ONLY})))
    extensions = () if mode is WheelMode.LIBRARY_ONLY else ("pkg._fast",)  # as mode_ext_modules has it
    tree = PackageTree(tmp_path, "pkg", tmp_path / "pkg", ["pkg", "pkg.opt"], extensions, switched_off=["pkg.opt"])
    return sort_installed([tmp_path / name for name in installed], tree, rules=rules, mode=mode, cache=Cache(),
                          wheel_exclude=["pkg/tests/**", "pkg/nothing/*"],
                          links=LinkGuard(tmp_path, [tmp_path]))


def test_every_installed_file_ships_unless_a_setting_keeps_it_out(tmp_path: Path) -> None:
    result = _sorted_tree(tmp_path, WheelMode.FULL)
    shipped = set(result.package_data["pkg"])
    # No package-data rule names these: they ship because CMake installed them.
    assert {"generated.txt", "data/x.txt", "lib/libcore.so", "lib/libpkg_python.so"} <= shipped
    reasons = {item.path: item.reason for item in result.excluded}
    assert reasons["pkg/tests/expected.txt"] == "wheel-exclude 'pkg/tests/**'"
    assert "`USE_GATED` does not hold" in reasons["pkg/include/gated/g.h"]
    assert "not for full wheels" in reasons["pkg/extra/blob.bin"]
    assert reasons["pkg/opt/x.txt"] == "optional package pkg.opt is switched off"
    assert reasons["pkg/__pycache__/m.cpython-311.pyc"].startswith("package-data exclude [")
    assert not shipped & {"tests/expected.txt", "include/gated/g.h", "extra/blob.bin", "opt/x.txt"}
    assert EXTENSION not in reasons and not any(EXTENSION.endswith(f) for f in shipped)  # build_ext ships it
    # Outside every package: it cannot ship, and says so.
    assert [(d.path, d.reason) for d in result.dropped] == [("stray.txt", "outside the packages the wheel ships: pkg")]
    assert result.unmatched_excludes == ("pkg/nothing/*",)
    assert result.py_modules == ("toplevel",)  # a module installed at the root is a top-level module


def test_a_folder_installed_at_the_wheels_root_ships_as_it_is(tmp_path: Path) -> None:
    """Wheel-root mode: `install(TARGETS prog)` puts bin/prog at the root, outside every package.
    It ships there, as scikit-build-core ships it (tests/packages/simple_pure of its sdist, built
    for real by tests/test_scikit_build_core_corpus.py); a file directly at the root, or in a
    folder whose name setuptools would read as a dotted package, cannot, and is dropped by name."""
    installed = ["pkg/__init__.py", "bin/prog", "share/doc/notes.txt", "stray.txt", "odd.name/x.txt", "top.py"]
    write_files(tmp_path, {name: "x" for name in installed})
    tree = PackageTree(tmp_path, "pkg", tmp_path / "pkg", ["pkg"])
    result = sort_installed([tmp_path / name for name in installed], tree, rules=default_rules(),
                            mode=WheelMode.FULL, cache=Cache(), wheel_exclude=[], links=LinkGuard(tmp_path, [tmp_path]))
    assert result.root_folders == ("bin", "share")
    assert result.package_data == {"pkg": ["__init__.py"], "bin": ["prog"], "share": ["doc/notes.txt"]}
    assert result.py_modules == ("top",)
    assert [d.path for d in result.dropped] == ["stray.txt", "odd.name/x.txt"]


def test_the_split_modes_keep_their_files_apart(tmp_path: Path) -> None:
    python_only = _sorted_tree(tmp_path, WheelMode.PYTHON_ONLY)
    reasons = {item.path: item.reason for item in python_only.excluded}
    # The core library belongs to the library wheel: left out by the mode, named, not "dropped".
    assert "not for python-only wheels" in reasons["pkg/lib/libcore.so"]
    assert "lib/libpkg_python.so" in python_only.package_data["pkg"]
    library_only = _sorted_tree(tmp_path, WheelMode.LIBRARY_ONLY)
    reasons = {item.path: item.reason for item in library_only.excluded}
    assert "not for library-only wheels" in reasons["pkg/lib/libpkg_python.so"]
    assert "extra/blob.bin" in library_only.package_data["pkg"]
    assert reasons[EXTENSION] == "a library-only wheel holds no Python extension module"
    assert [d.path for d in python_only.dropped] == [d.path for d in library_only.dropped] == ["stray.txt"]


# --- native content ----------------------------------------------------------------

@needs_gcc
def test_native_binaries_are_told_by_their_bytes(tmp_path: Path) -> None:
    source = tmp_path / "plain.c"
    source.write_text("int plain(void) { return 1; }\n")
    run(["gcc", "-shared", "-fPIC", "-o", tmp_path / "libplain.so", source])
    (tmp_path / "notes.so").write_text("not a library, whatever its name\n")
    pe = bytearray(512)
    pe[:2], pe[0x3C:0x40], pe[0x80:0x84] = b"MZ", (0x80).to_bytes(4, "little"), b"PE\0\0"
    assert binary_format(bytes(pe)) == "PE"
    assert binary_format(b"MZ" + bytes(100)) is None  # a DOS stub without a PE header
    assert binary_format(b"\xcf\xfa\xed\xfe" + bytes(28)) == "Mach-O"  # 64-bit, little-endian
    assert binary_format(b"\xca\xfe\xba\xbe\x00\x00\x00\x02") == "Mach-O"  # universal, two architectures
    assert binary_format(b"\xca\xfe\xba\xbe\x00\x00\x00\x34") is None  # a Java class file (version 52)
    content = native_content({"pkg/libplain.so": tmp_path / "libplain.so", "pkg/notes.so": tmp_path / "notes.so",
                              "pkg/plain.c": source})
    assert content.binaries == ("pkg/libplain.so",) and content.extension_modules == ()


def _wheel_with(path: Path, files: dict[str, bytes], *, tag: str, purelib: bool) -> Path:
    """A minimal wheel by hand (the audit does not check RECORD hashes)."""
    dist_info = "handmade-1.0.dist-info"
    with zipfile.ZipFile(path / f"handmade-1.0-{tag}.whl", "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{dist_info}/METADATA", "Metadata-Version: 2.1\nName: handmade\nVersion: 1.0\n")
        archive.writestr(f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: {str(purelib).lower()}\n"
                                               f"Tag: {tag}\n")
        archive.writestr(f"{dist_info}/RECORD", "")
    return path / f"handmade-1.0-{tag}.whl"


@needs_gcc
@pytest.mark.parametrize("tag, purelib, says", [("py3-none-any", False, "platform tag any"),
                                                (f"py3-none-{PLATFORM}", True, "Root-Is-Purelib: true")])
def test_the_audit_refuses_a_pure_tag_over_a_handmade_native_wheel(tmp_path: Path, tag: str, purelib: bool,
                                                                   says: str) -> None:
    source = tmp_path / "plain.c"
    source.write_text("int plain(void) { return 1; }\n")
    run(["gcc", "-shared", "-fPIC", "-o", tmp_path / "libplain.so", source])
    files = {"handmade/__init__.py": b"", "handmade/libplain.so": (tmp_path / "libplain.so").read_bytes()}
    findings = audit(_wheel_with(tmp_path, files, tag=tag, purelib=purelib), tools=False).findings
    assert [(f.check, f.file) for f in findings] == [("tag", "handmade/libplain.so")], findings
    assert says in findings[0].reason and "ELF binary in a wheel tagged pure" in findings[0].reason
    honest = _wheel_with(tmp_path, files, tag=f"py3-none-{PLATFORM}", purelib=False)
    assert audit(honest, tools=False).findings == []


# --- a real build --------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(test_package: Callable[..., Path], tmp_path_factory) -> tuple[Path, Path, str]:
    """tests/packages/installed_files, in a git checkout whose .gitignore names what CMake
    installs, built into a wheel with pip (verbose, so the backend's warnings show)."""
    project = test_package("installed_files")
    (project / ".gitignore").write_text(GITIGNORE)
    commit_all(project)
    dist = tmp_path_factory.mktemp("dist")
    done = run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "--no-index",
                "-w", dist, project], env=clean_env(COLUMNS="400"))
    return project, only_wheel(dist), unboxed(done.stdout + done.stderr)


@pytest.mark.slow
def test_what_cmake_installed_ships_without_a_rule_even_if_gitignored(built, overlay_python: Path,
                                                                      tmp_path: Path) -> None:
    project, wheel, _ = built
    names = set(zipfile.ZipFile(wheel).namelist())
    assert SHIPPED <= names, sorted(names)
    assert not {n for n in names if n.startswith("instfiles/tests/") or n == "stray.txt"}, sorted(names)
    # .gitignore names every one of them, and git agrees: still in the wheel.
    assert git(project, "check-ignore", "instfiles/generated.txt", "instfiles/libplain.so").splitlines() == [
        "instfiles/generated.txt", "instfiles/libplain.so"]
    run([overlay_python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], env=clean_env())
    probe = ("import instfiles as p; print(p.plain_answer(), p.text('generated.txt'), '|', p.text('data/x.txt'),"
             " '|', p.text('configured.txt'))")
    out = run([overlay_python, "-c", probe], cwd=tmp_path, env=clean_env()).stdout.strip()
    assert out == "42 generated by CMake | data from the source tree | instfiles 1.0.0"


@pytest.mark.slow
def test_a_dropped_file_is_named_and_an_excluded_one_is_not(built) -> None:
    project, _, output = built
    assert ("1 file(s) CMake installed into the package tree are not in the wheel: stray.txt "
            "(outside the packages the wheel ships: instfiles)") in output, output
    assert "wheel-exclude" in output and "expected.txt" not in output
    # What `buildkit wheels` fails on after each build.
    problems = dropped_files_problem(build_folder(project))
    assert len(problems) == 1 and "stray.txt" in problems[0] and "wheel-exclude" in problems[0]


@pytest.mark.slow
def test_a_wheel_whose_only_binary_is_a_plain_library_is_a_platform_wheel(built, tmp_path: Path) -> None:
    _, wheel, output = built
    assert wheel.name == f"instfiles-1.0.0-py3-none-{PLATFORM}.whl"
    with zipfile.ZipFile(wheel) as archive:
        fields = archive.read("instfiles-1.0.0.dist-info/WHEEL").decode().splitlines()
    assert "Root-Is-Purelib: false" in fields and f"Tag: py3-none-{PLATFORM}" in fields
    assert "a platform wheel: instfiles/libplain.so is a native binary" in output
    assert not [f for f in audit(wheel, tools=False).findings if f.check == "tag"]
    # The same wheel as it used to come out: tagged pure over the same library.
    pure = tmp_path / "instfiles-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(pure, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".dist-info/WHEEL"):
                data = data.replace(b"Root-Is-Purelib: false", b"Root-Is-Purelib: true").replace(
                    PLATFORM.encode(), b"any")
            target.writestr(info, data)
    refused = [(f.check, f.file) for f in audit(pure, tools=False).findings]
    assert refused == [("tag", "instfiles/libplain.so")], refused


@pytest.mark.slow
def test_buildkit_wheels_fails_on_a_dropped_file(test_package: Callable[..., Path], wheelhouse: Path,
                                                 tmp_path: Path) -> None:
    project = test_package("installed_files")
    result = run([sys.executable, "-m", "buildkit", "wheels", project, "--out", tmp_path / "out", "--wheelhouse",
                  wheelhouse, "--no-repair", "--no-smoke", "--report", tmp_path / "report.json"],
                 env=clean_env(COLUMNS="400"), check=False, timeout=600)
    output = unboxed(result.stdout + result.stderr)
    assert result.returncode == 1 and "Traceback" not in output, output
    assert "stray.txt (outside the packages the wheel ships: instfiles)" in output, output
    problems = (tmp_path / "report.json").read_text()
    assert "stray.txt" in problems and "expected.txt" not in problems


def test_an_empty_script_ships_as_it_is(tmp_path: Path) -> None:
    """An empty file CMake installed to the scripts folder (`file(TOUCH)` in SKBUILD_SCRIPTS_DIR,
    scikit-build-core's filepath_pure sample) is copied as it is: distutils skipped it as empty,
    then failed on the copy it had not made ("No such file or directory")."""
    write_files(tmp_path / "scripts", {"in_scripts.py": "", "tool.py": "#!python\nprint('tool')\n"})
    distribution = Distribution({"name": "demo", "scripts": [str(tmp_path / "scripts" / n)
                                                             for n in ("in_scripts.py", "tool.py")]})
    command = BuildScripts(distribution)
    command.ensure_finalized()
    command.build_dir, command.executable = str(tmp_path / "out"), "/usr/bin/python3"
    command.run()
    assert (tmp_path / "out" / "in_scripts.py").read_bytes() == b""
    assert (tmp_path / "out" / "tool.py").read_text() == "#!/usr/bin/python3\nprint('tool')\n"
