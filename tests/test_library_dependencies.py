"""The rules behind library wheels and library dependencies, without a build: version
policies, the generated loader's version check, .pc relocation, library renames,
the discovery folders, and the settings' errors."""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from buildkit._util.resources import templates_dir
from buildkit.builder.configure.cmake_cache import CMakeCache
from buildkit.config.forwarding import argument_definitions
from buildkit.config.modes import VersionPolicy
from buildkit.config.options import load_options
from buildkit.config.settings import load_settings
from buildkit.errors import BuildkitError, ConfigError
from buildkit.package.dependencies import FoundDependency, find_dependency, loader_table, pinned_requirements
from buildkit.package.discovery import entry_points, library_folders
from buildkit.package.library_tree import fix_library_tree, relocate_pkg_config
from buildkit.package.split import python_only_dependency
from buildkit.project.library_conditions import Decision
from buildkit_testing.projects import write_files, write_pyproject


def found(version: str, policy: VersionPolicy, distribution: str = "libfmt", **extra) -> FoundDependency:
    return FoundDependency(distribution, version, policy.value, "fmt", "/site", "libfmt", "libfmt", ("libfmt/lib",),
                           ("libfmt.so.12",), **extra)


@pytest.mark.parametrize("version, policy, requirement", [
    ("12.2.1", VersionPolicy.EXACT, "libfmt==12.2.1"),
    ("12.2.1", VersionPolicy.SAME_MINOR, "libfmt>=12.2.1,==12.2.*"),
    ("12.2.1", VersionPolicy.SAME_MAJOR, "libfmt>=12.2.1,==12.*"),
    ("2.15.0+cu130", VersionPolicy.EXACT, "libfmt==2.15.0"),  # torch's local label never reaches the pin
])
def test_requirement_follows_the_policy(version, policy, requirement):
    assert found(version, policy).requirement() == requirement


def test_python_only_pins_exactly_this_build():
    dependency = found("1.2.0a0+gitabc1234", VersionPolicy.EXACT, same_build=True)
    assert dependency.requirement() == "libfmt==1.2.0a0+gitabc1234"
    assert python_only_dependency("libfoo").version is VersionPolicy.EXACT


def test_a_pin_replaces_the_projects_own_requirement_and_says_so(capsys):
    pinned = pinned_requirements(["numpy>=1.22", "LibFmt>=1"], [found("12.2.1", VersionPolicy.SAME_MAJOR).requirement()])
    assert pinned == ["numpy>=1.22", "libfmt>=12.2.1,==12.*"]
    assert "'LibFmt>=1' replaced by 'libfmt>=12.2.1,==12.*'" in capsys.readouterr().err


@pytest.mark.parametrize("base, pins, bad", [(["numpy>=1.22"], ["libfoo==banana"], "banana"),
                                             (["lib foo!"], ["libfoo==1.0"], "lib foo!")])
def test_an_unwritable_requirement_is_a_config_error(base, pins, bad):
    with pytest.raises(ConfigError, match=re.escape(bad)):
        pinned_requirements(base, pins)


def test_a_missing_dependency_is_one_clear_error():
    with pytest.raises(BuildkitError) as error:
        find_dependency(python_only_dependency("libnot-installed-anywhere"), project="demo")
    assert "demo links the native libraries of libnot-installed-anywhere" in error.value.message
    assert "--no-build-isolation" in error.value.hint and "[build-system] requires" in error.value.hint
    # A conditional one cannot go into [build-system] requires: the PEP 517 hook asks for it.
    conditional = replace(python_only_dependency("libnot-installed-anywhere"), when="USE_IT")
    with pytest.raises(BuildkitError) as error:
        find_dependency(conditional, project="demo")
    assert error.value.hint == ("Install it where the build runs: `pip install libnot-installed-anywhere` and build "
                                "with --no-build-isolation (an isolated build asks for it itself while its `when`, "
                                "USE_IT, holds).")


def loader_module(tmp_path: Path):
    """The generated loader's functions, from its template with an empty table."""
    text = (templates_dir() / "native_loader.py.in").read_text()
    for name in ("package", "library_distribution", "library_package", "version", "preload", "dependencies"):
        text = text.replace(f"${name}_repr", "[]" if name in ("preload", "dependencies") else "'x'")
    text = text.replace("$library_dependencies", "none").replace("$library_distribution", "x").replace("$package", "x")
    (tmp_path / "loader.py").write_text(text)
    spec = importlib.util.spec_from_file_location("loader", tmp_path / "loader.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("policy, installed, allowed", [
    ("exact", "2.15.0+cu130", True), ("exact", "2.15.1", False),
    ("same-minor", "12.2.9", True), ("same-minor", "12.3.0", False), ("same-minor", "12.2.0", False),
    ("same-major", "12.9", True), ("same-major", "13.0.0", False), ("same-major", "12.1.0", False),
])
def test_the_loader_allows_what_the_pin_allows(tmp_path, policy, installed, allowed):
    loader = loader_module(tmp_path)
    assert loader._allows({"built_against": "12.2.1" if policy != "exact" else "2.15.0+cpu", "policy": policy},
                          installed) is allowed


def test_pkg_config_relocation_and_link_names():
    text = ("prefix=/build/x/libfmt\nexec_prefix=/build/x/libfmt\nlibdir=${exec_prefix}/lib\n"
            "includedir=/build/x/libfmt/include\nLibs: -L${libdir} -lfmt -lfmt-extra\nCflags: -I${includedir}\n")
    relocated = relocate_pkg_config(text, "../..", [Path("/build/x/libfmt")], {"libfmt.so": "libfmt.so.12"})
    assert relocated == ("prefix=${pcfiledir}/../..\nexec_prefix=${prefix}\nlibdir=${exec_prefix}/lib\n"
                         "includedir=${prefix}/include\nLibs: -L${libdir} -l:libfmt.so.12 -lfmt-extra\n"
                         "Cflags: -I${includedir}\n")
    # A longer folder that merely starts with the prefix is not the prefix.
    assert "/build/x/libfmt2" in relocate_pkg_config("x=/build/x/libfmt2/lib\n", "..", [Path("/build/x/libfmt")], {})


def test_symlink_chains_collapse_to_the_soname(tmp_path):
    elf = (Path(os.__file__).parent / ".." / "libpython3.11.so.1.0").resolve()
    if not elf.is_file():
        pytest.skip("needs a shared library with a SONAME to copy (libpython)")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libpython3.11.so.1.0.real").write_bytes(elf.read_bytes())
    (lib / "libpython3.11.so.1.0").symlink_to("libpython3.11.so.1.0.real")
    (lib / "libpython3.11.so").symlink_to("libpython3.11.so.1.0")
    write_files(tmp_path, {"share/cmake/p/p-targets.cmake": 'IMPORTED_LOCATION "${_IMPORT_PREFIX}/lib/'
                                                            'libpython3.11.so.1.0.real"\n'})
    files = ["lib/libpython3.11.so", "lib/libpython3.11.so.1.0", "lib/libpython3.11.so.1.0.real",
             "share/cmake/p/p-targets.cmake"]
    shipped, fixes = fix_library_tree(tmp_path, files, [tmp_path])
    assert shipped == ["lib/libpython3.11.so.1.0", "share/cmake/p/p-targets.cmake"]
    assert not (lib / "libpython3.11.so.1.0").is_symlink() and sorted(p.name for p in lib.iterdir()) == [
        "libpython3.11.so.1.0"]
    assert fixes.renamed == {"lib/libpython3.11.so": "lib/libpython3.11.so.1.0",
                             "lib/libpython3.11.so.1.0.real": "lib/libpython3.11.so.1.0"}
    assert "lib/libpython3.11.so.1.0\"" in (tmp_path / "share/cmake/p/p-targets.cmake").read_text()


def test_discovery_folders_and_entry_points():
    folders = library_folders(["include/fmt/core.h", "lib64/libfmt.so.12", "lib64/cmake/fmt/fmt-config.cmake",
                               "lib64/pkgconfig/fmt.pc"])
    assert (folders.include, folders.lib, folders.cmake, folders.pkgconfig) == (
        "include", "lib64", "lib64/cmake/fmt", "lib64/pkgconfig")
    assert entry_points("libfmt", folders) == {"cmake.prefix": ["libfmt = libfmt"],
                                               "pkg_config": ["libfmt = libfmt.lib64.pkgconfig"]}
    assert entry_points("libfmt", library_folders(["lib/libfmt.so.12"])) == {"cmake.prefix": ["libfmt = libfmt"]}


def test_library_only_project_is_its_own_library_distribution(tmp_path):
    write_pyproject(tmp_path, "library-only = true", name="libfmt")
    settings = load_settings(tmp_path, frozenset({"library-only"}))
    assert settings.is_library and settings.library_distribution == "libfmt"


@pytest.mark.parametrize("entry, words", [
    ('{ distribution = "libfmt", version = "compatible" }', "`exact`, `same-minor` or `same-major`"),
    ('{ distribution = "lib fmt" }', "distribution name"),
    ('{ cmake-package = "fmt" }', "distribution"),
    ('{ distribution = "libfmt", when = "USE_FMT and" }', "Cannot read the `when` condition"),
])
def test_bad_library_dependency_entries_are_named(tmp_path, entry, words):
    write_pyproject(tmp_path, f"library-dependencies = [{entry}]")
    with pytest.raises(ConfigError) as error:
        load_settings(tmp_path)
    assert "library-dependencies[0]" in error.value.message and words in error.value.message


def test_a_pin_setuptools_would_drop_is_refused(tmp_path):
    """Without `dependencies` in [project] dynamic, setuptools writes no requirement of buildkit's."""
    from buildkit.frontends.setuptools.packaging import _refuse_dropped_pins
    from buildkit.project import Project

    write_pyproject(tmp_path)
    project = Project.load(tmp_path, environ={"BUILD_PYTHON_ONLY": "1"})
    with pytest.raises(BuildkitError) as error:
        _refuse_dropped_pins(project, project.requirements())
    assert "must require libdemo==1.0" in error.value.message and '"dependencies"' in error.value.hint


def test_the_loader_refuses_a_torch_of_another_cuda_major(tmp_path, monkeypatch):
    """An extension built against a CUDA 13 torch must not load into a CUDA 12 one (or a CPU build)."""
    loader = loader_module(tmp_path)
    write_files(tmp_path / "site", {"faketorch/__init__.py": "", "faketorch/version.py": "cuda = '12.8'\n"})
    (tmp_path / "site" / "faketorch" / "__init__.py").write_text("from faketorch import version\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(loader, "_installed_version", lambda name: "2.15.0+cu128")
    dependency = {"distribution": "faketorch", "package": "faketorch", "built_against": "2.15.0", "policy": "exact",
                  "requirement": "faketorch==2.15.0", "preload": [], "import": "faketorch", "cuda": "13.0",
                  "search": "installed"}
    with pytest.raises(ImportError, match=re.escape("built against faketorch with CUDA 13.0, but the installed "
                                                    "faketorch 2.15.0+cu128 has CUDA 12.8")):
        loader._load_dependency(dependency)
    loader._load_dependency({**dependency, "cuda": "12.1"})  # the same major loads


@pytest.mark.parametrize("linked, cuda", [
    (["lib/libtorch.so", "lib/libtorch_cpu.so", "lib/libc10.so"], None),  # a CPU extension
    (["lib/libtorch.so", "lib/libc10.so", "lib/libc10_cuda.so"], "13.2"),  # a CUDA extension
])
def test_only_an_extension_linking_torchs_cuda_libraries_needs_a_cuda_torch(linked: list[str], cuda) -> None:
    """A CPU extension built against a CUDA build of torch loads into a CPU torch: the loader
    asks for torch's CUDA version only of binaries that link its CUDA libraries."""
    torch = FoundDependency("torch", "2.15.0", "exact", "Torch", "/site", "torch", "torch", ("torch/lib",),
                            ("libtorch.so", "libtorch_cpu.so", "libc10.so", "libc10_cuda.so"), cuda="13.2")
    [entry] = loader_table([torch], {"torch": linked})
    assert entry["cuda"] == cuda


# ---- `when` on library-dependencies: decided before the configure, checked after -----------
CONDITIONAL = ('library-dependencies = [{ distribution = "nvidia-cublas", when = "USE_CUDA and USE_CUBLAS" },\n'
               '                        { distribution = "libfmt" }]')


def decision(tmp_path, environ: dict[str, str], cache_text: str | None = None) -> Decision:
    write_pyproject(tmp_path, CONDITIONAL)
    settings = load_settings(tmp_path)
    cache = CMakeCache.parse(cache_text) if cache_text is not None else None
    return Decision.before_configure(settings, load_options(settings, environ=environ), cache)


def test_cmake_args_definitions_are_read_as_cmake_reads_them():
    assert argument_definitions(("-DA=1", "-D", "B:BOOL=ON", "-DC", "-GNinja", "-DA=0")) == {"A": "0", "B": "ON"}


@pytest.mark.parametrize("environ, cache_text, holds", [
    ({}, None, False),
    ({"USE_CUDA": "ON", "USE_CUBLAS": "1"}, None, True),
    ({"USE_CUDA": "ON", "USE_CUBLAS": "OFF"}, None, False),
    ({"USE_CUDA": "ON", "CMAKE_ARGS": "-DUSE_CUBLAS:BOOL=YES"}, None, True),  # CMAKE_ARGS counts
    ({"USE_CUDA": "ON", "USE_CUBLAS": "ON", "CMAKE_ARGS": "-DUSE_CUBLAS=OFF"}, None, False),  # ... and comes last
    ({}, "USE_CUDA:BOOL=ON\nUSE_CUBLAS:BOOL=ON\n", True),  # an earlier configure's cache
    ({"USE_CUBLAS": "0"}, "USE_CUDA:BOOL=ON\nUSE_CUBLAS:BOOL=ON\n", False),  # what this one is told wins
    ({"USE_CUDA": "ON", "USE_CUBLAS": "NOTFOUND"}, None, False),  # CMake's false constants
])
def test_a_condition_is_decided_from_what_the_configure_will_be_told(tmp_path, environ, cache_text, holds):
    decided = decision(tmp_path, environ, cache_text)
    assert decided.holds == {"nvidia-cublas": holds, "libfmt": True}
    # The PEP 517 hook asks for the conditional one when it holds; the unconditional one is pyproject's.
    assert decided.build_requirements() == (["nvidia-cublas"] if holds else [])


@pytest.mark.parametrize("table, environ, config, origin", [
    ("", {"USE_CUDA": "ON"}, {}, "USE_CUDA=ON from the environment"),
    ("", {"CMAKE_ARGS": "-DUSE_CUDA:BOOL=ON"}, {}, "USE_CUDA=ON from CMAKE_ARGS"),
    ("", {"USE_CUDA": "OFF"}, {"CMAKE_ARGS": "-DUSE_CUDA=ON"}, "USE_CUDA=ON from the CMAKE_ARGS config setting"),
    ("", {}, {"USE_CUDA": "ON"}, "USE_CUDA=ON from a config setting"),
    ('cmake-defines = { USE_CUDA = true }', {}, {}, "USE_CUDA=ON from [tool.buildkit] cmake-defines"),
])
def test_a_disagreement_says_where_each_value_came_from(tmp_path, table, environ, config, origin):
    write_pyproject(tmp_path, f"{CONDITIONAL}\n{table}")
    settings = load_settings(tmp_path)
    decided = Decision.before_configure(settings, load_options(settings, environ=environ, config_settings=config),
                                        None)
    with pytest.raises(BuildkitError) as error:
        decided.check_after_configure(CMakeCache.parse("USE_CUDA:BOOL=ON\nUSE_CUBLAS:BOOL=ON\n"))
    assert f"(USE_CUBLAS set by nothing (off); {origin}); so this build" in error.value.message


def test_a_cache_that_answers_otherwise_after_the_configure_stops_the_build(tmp_path):
    decided = decision(tmp_path, {"USE_CUDA": "ON"})  # USE_CUBLAS set by nothing: off before
    after = CMakeCache.parse("USE_CUDA:BOOL=ON\nUSE_CUBLAS:BOOL=ON\n")  # the project's default: on
    with pytest.raises(BuildkitError) as error:
        decided.check_after_configure(after)
    assert error.value.message == (
        'The library dependency nvidia-cublas has `when = "USE_CUDA and USE_CUBLAS"`, which holds in the cache '
        "this configure wrote (USE_CUBLAS on, USE_CUDA on) but did not before it, when buildkit found library "
        "dependencies (USE_CUBLAS set by nothing (off); USE_CUDA=ON from the environment); so this "
        "build went without nvidia-cublas: not on CMake's search path, not required by the wheel, not preloaded.")
    assert "Set USE_CUBLAS and USE_CUDA in the environment" in error.value.hint

    forced_off = decision(tmp_path, {"USE_CUDA": "ON", "USE_CUBLAS": "ON"})
    with pytest.raises(BuildkitError) as error:
        forced_off.check_after_configure(CMakeCache.parse("USE_CUDA:BOOL=ON\nUSE_CUBLAS:BOOL=OFF\n"))
    assert "does not hold in the cache this configure wrote" in error.value.message
    assert "require and preload nvidia-cublas though the configure turned it off" in error.value.message
    forced_off.check_after_configure(after)  # agrees: nothing to say
