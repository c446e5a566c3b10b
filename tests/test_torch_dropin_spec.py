"""buildkit.torch without torch: what cpp_extension's arguments become (TorchExtension), the
CMake project written from them (builder/configure/torch_project.py, configured by real cmake
against a stand-in for BuildkitTorch.cmake, so the flags' order, grouping and quoting are
CMake's own), the settings of such a project, and the checks around them.  The builds against
a real torch are tests/test_torch_dropin.py (`-m torch`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from buildkit.builder.configure import torch_env
from buildkit.builder.configure.torch_env import InstalledTorch, compiler_findings, cpp_extension_limited_api
from buildkit.builder.configure.torch_project import (
    LANGUAGES,
    TorchModule,
    TorchProject,
    cmake_lists,
    compiler_defines,
    write_cmake_project,
)
from buildkit.builder.toolchain.tools import Compilers, Tool, find_cmake
from buildkit.config.drop_in import TORCH, SetupFacts, load_drop_in_settings, uses_drop_in
from buildkit.config.options import option_keys
from buildkit.errors import ConfigError, ReportedExit
from buildkit.frontends.setuptools.commands.torch_build_ext import BuildExtension
from buildkit.package.torch_extension import TorchExtension
from buildkit_testing.processes import clean_env, run

ROOT = Path("/project")


def module_of(cuda: bool = False, limited_api: str | None = None, **kwargs) -> TorchModule:
    return TorchExtension("pkg._C", ["csrc/a.cpp"], cuda=cuda, **kwargs).module(
        ROOT, limited_api=limited_api, abi_suffix=True, torch_cuda="13.0")


# ------------------------------------------------------------- the arguments

def test_a_list_of_compile_args_is_every_compilers_and_a_table_names_each() -> None:
    listed = module_of(extra_compile_args=["-O3", "-g"])
    assert listed.cxx_flags == ("-O3", "-g") and listed.nvcc_flags == ("-O3", "-g")
    table = module_of(cuda=True, extra_compile_args={"cxx": ["-O2"], "nvcc": ["--use_fast_math"]})
    assert table.cxx_flags == ("-O2",) and table.nvcc_flags == ("--use_fast_math",) and table.dlink_flags == ()
    only_nvcc = module_of(cuda=True, extra_compile_args={"nvcc": ["-O1"]})
    assert only_nvcc.cxx_flags == ()  # a compiler the table leaves out gets nothing, as in cpp_extension


def test_paths_are_taken_from_setup_pys_folder_and_macros_keep_their_form() -> None:
    module = module_of(include_dirs=["csrc", "/abs/inc"], library_dirs=["lib"], libraries=["m"],
                       define_macros=[("WITH_PYTHON", None), ("LEVEL", "2"), ("ONLY",)], undef_macros=["NDEBUG"],
                       extra_link_args=["-s"])
    assert module.sources == ("/project/csrc/a.cpp",)
    assert module.include_dirs == ("/project/csrc", "/abs/inc") and module.library_dirs == ("/project/lib",)
    assert module.define_macros == (("WITH_PYTHON", None), ("LEVEL", "2"), ("ONLY", None))
    assert (module.undef_macros, module.libraries, module.link_flags) == (("NDEBUG",), ("m",), ("-s",))


def test_dlink_links_device_code_as_cpp_extension_does() -> None:
    ext = TorchExtension("pkg._C", ["a.cu"], cuda=True, dlink=True, dlink_libraries=["nvshmem"],
                         library_dirs=["/opt/nvshmem/lib"], extra_compile_args={"nvcc_dlink": ["-Xnvlink=-v"]})
    module = ext.module(ROOT, limited_api=None, abi_suffix=True, torch_cuda="12.8")
    assert module.dlink and module.dlink_flags == ("-Xnvlink=-v", "-dlto", "-L/opt/nvshmem/lib", "-lnvshmem")
    assert "-dlto" not in ext.module(ROOT, limited_api=None, abi_suffix=True, torch_cuda="11.1").dlink_flags
    # An nvcc_dlink list alone device-links too, with its flags only (no -dlto), as cpp_extension does.
    plain = module_of(cuda=True, extra_compile_args={"nvcc": ["-rdc=true"], "nvcc_dlink": ["-Xnvlink=-v"]})
    assert plain.dlink and plain.dlink_flags == ("-Xnvlink=-v",)
    assert not module_of(cuda=True, extra_compile_args={"nvcc": ["-rdc=true"]}).dlink


def test_architecture_flags_of_its_own_turn_cmakes_off() -> None:
    assert module_of(cuda=True, extra_compile_args={"nvcc": ["-gencode=arch=compute_80,code=sm_80"]}).own_architectures
    assert not module_of(cuda=True, extra_compile_args={"nvcc": ["-DTORCH_EXTENSION_NAME=march"]}).own_architectures


def test_a_limited_api_define_of_the_project_gives_way_to_py_api(capsys: pytest.CaptureFixture[str]) -> None:
    module = module_of(limited_api="3.9", extra_compile_args={"cxx": ["-O3", "-DPy_LIMITED_API=0x03090000"]})
    assert module.cxx_flags == ("-O3",) and module.limited_api == "3.9"
    assert "-DPy_LIMITED_API=0x03090000 left out" in capsys.readouterr().err


@pytest.mark.parametrize("kwargs, named", [
    ({"runtime_library_dirs": ["/x"]}, "`runtime_library_dirs`"),
    ({"extra_objects": ["a.o"], "optional": True}, "`extra_objects`, `optional`"),
    ({"dlink": True}, "`dlink`"),  # CppExtension has no device link
    ({"extra_compile_args": {"sycl": ["-O2"]}}, "'sycl' (SYCL sources are not built"),
    ({"extra_compile_args": {"cxx": ["-O2"], "nvc": []}}, "'nvc'"),
    ({"extra_compile_args": "-O2"}, "must be a list of strings"),
    ({"define_macros": [("A", 1)]}, "define_macros holds ('A', 1)"),
])
def test_an_argument_buildkit_does_not_build_is_one_error_naming_it(kwargs: dict, named: str) -> None:
    with pytest.raises(ConfigError) as error:
        TorchExtension("pkg._C", ["a.cpp"], cuda=False, **kwargs)
    assert named in error.value.message and "CppExtension('pkg._C', ...)" in error.value.message


def test_sources_buildkit_does_not_compile_are_named() -> None:
    with pytest.raises(ConfigError, match=r"lists kernels\.hip, x\.sycl: buildkit\.torch compiles C"):
        TorchExtension("pkg._C", ["a.cpp", "kernels.hip", "x.sycl"], cuda=True)
    with pytest.raises(ConfigError, match="positional argument"):
        TorchExtension("pkg._C", ["a.cpp"], ["include"], cuda=False)


def test_build_extension_options_are_cpp_extensions(capsys: pytest.CaptureFixture[str]) -> None:
    assert issubclass(BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False), BuildExtension)
    with pytest.raises(ReportedExit):
        BuildExtension.with_options(no_python_abi_suffix=True, parallel=4)
    assert "BuildExtension got the option(s) 'parallel'" in capsys.readouterr().err


UNSUPPORTED = """
from setuptools import setup
from buildkit.torch import BuildExtension, CppExtension
setup(name="bad", ext_modules=[CppExtension("bad._C", ["a.cpp"], runtime_library_dirs=["/opt/lib"])],
      cmdclass={"build_ext": BuildExtension})
"""


@pytest.mark.parametrize("command", [["-m", "buildkit", "develop"], ["setup.py", "build_ext", "--inplace"]])
def test_an_unsupported_argument_stops_setup_py_with_one_error(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "setup.py").write_text(UNSUPPORTED)
    done = run([sys.executable, *command], cwd=tmp_path, env=clean_env(), check=False)
    assert done.returncode == 1
    assert "`runtime_library_dirs`, which buildkit.torch does not build" in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


# ------------------------------------------------------- the CMake project

def test_the_cmake_project_text() -> None:
    module = TorchModule("pkg.sub._C", ("/p/a.cpp", "/p/k.cu"), cuda=True, limited_api="3.9", abi_suffix=False,
                         dlink=True, dlink_flags=("-dlto",), own_architectures=True)
    text = cmake_lists(TorchProject("my pkg", (module,)))
    assert "cmake_minimum_required(VERSION 3.26)" in text  # USE_SABI
    assert 'project("my_pkg" LANGUAGES CXX CUDA)' in text
    assert 'buildkit_torch_extension("pkg.sub._C" MODULE NAME "_C" USE_SABI 3.9 NO_SOABI SOURCES' in text
    assert "CUDA_SEPARABLE_COMPILATION ON CUDA_RESOLVE_DEVICE_SYMBOLS ON CUDA_ARCHITECTURES OFF" in text
    assert '"$<DEVICE_LINK:SHELL:-dlto>"' in text
    assert 'target_link_directories("pkg.sub._C" PRIVATE\n  "${TORCH_INSTALL_PREFIX}/lib"\n  "${CUDAToolkit_LIBRARY_DIR}")' \
        in text and "find_package(CUDAToolkit REQUIRED)" in text  # as cpp_extension's library_paths()
    assert 'install(TARGETS "pkg.sub._C" LIBRARY DESTINATION "pkg/sub" RUNTIME DESTINATION "pkg/sub")' in text
    top = cmake_lists(TorchProject("t", (TorchModule("top", ("/p/a.c", "/p/b.cpp")),)))
    assert "LANGUAGES C CXX)" in top and "VERSION 3.24" in top and 'DESTINATION "."' in top


def test_written_only_when_its_text_changes(tmp_path: Path) -> None:
    project = TorchProject("t", (TorchModule("pkg._C", ("/p/a.cpp",)),))
    assert write_cmake_project(tmp_path / "gen", project) is True
    stamp = (tmp_path / "gen" / "CMakeLists.txt").stat().st_mtime_ns
    assert write_cmake_project(tmp_path / "gen", project) is False
    assert (tmp_path / "gen" / "CMakeLists.txt").stat().st_mtime_ns == stamp


# A stand-in for BuildkitTorch.cmake: the same signature, a plain module library.
STAND_IN = """
function(buildkit_torch_extension target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "MODULE;LIBRARY;NO_SOABI" "NAME;USE_SABI" "SOURCES")
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME "${ARG_NAME}" PREFIX "")
endfunction()
"""


def test_cmake_passes_every_flag_as_written(tmp_path: Path) -> None:
    """Real cmake configures the written project: each flag reaches the compiler once, in its
    order, repetitions kept (-Xlinker pairs), spaces, quotes, `$`, `;`, `>` and `,` intact, every
    setuptools' order: define_macros' -D, then undef_macros' -U (which wins over them), then
    extra_compile_args (whose -D wins over the -U)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cpp").write_text("int f() { return 0; }\n")
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "BuildkitTorch.cmake").write_text(STAND_IN)
    flags = ("-O2", "-Wall", "-Wall", "-DQUOTED=\"a b\"", "-DDOLLAR=$HOME", "-DLIST=a;b", "-DCMP=a>b,c",
             "-DAGAIN=1")
    module = TorchModule("pkg._C", (str(tmp_path / "src" / "a.cpp"),), include_dirs=(str(tmp_path / "my inc"),),
                         define_macros=(("WITH_PYTHON", None), ("TEXT", '"x;y"'), ("POISON", None)),
                         undef_macros=("POISON", "AGAIN"), cxx_flags=flags, link_flags=("-Wl,-z,defs", "-s"))
    write_cmake_project(tmp_path / "gen", TorchProject("t", (module,)))
    build = tmp_path / "build"
    done = subprocess.run([str(find_cmake().path), "-S", str(tmp_path / "gen"), "-B", str(build), "-G", "Ninja",
                           f"-DCMAKE_MODULE_PATH={tmp_path / 'modules'}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    arguments = [*ninja_variable(build, "DEFINES"), *ninja_variable(build, "INCLUDES"), *ninja_variable(build, "FLAGS")]
    assert _sub(arguments, list(flags)), arguments
    assert _sub(arguments, ["-DPOISON", '-DTEXT="x;y"', "-DWITH_PYTHON"]), arguments
    assert arguments.index("-DPOISON") < arguments.index("-UPOISON") < arguments.index("-DAGAIN=1")
    assert arguments.index("-UAGAIN") < arguments.index("-DAGAIN=1")
    assert f"-I{tmp_path / 'my inc'}" in arguments
    assert _sub(ninja_variable(build, "LINK_FLAGS"), ["-Wl,-z,defs", "-s"])


def ninja_variable(build: Path, name: str) -> list[str]:
    """The arguments the shell gets from a variable of the compile or link edge in build.ninja."""
    line = next(line for line in (build / "build.ninja").read_text().splitlines()
                if line.strip().startswith(f"{name} = "))
    words = line.split(" = ", 1)[1].replace("$$", "$")  # ninja's escape; the rest is the shell's
    printed = subprocess.run(["sh", "-c", f"printf '%s\\n' {words}"], capture_output=True, text=True, check=True)
    return printed.stdout.splitlines()


def _sub(arguments: list[str], wanted: list[str]) -> bool:
    """Whether ``wanted`` appears in ``arguments`` as one run."""
    return any(arguments[i:i + len(wanted)] == wanted for i in range(len(arguments)))


# ---------------------------------------------------- the project's settings

def facts(**overrides) -> SetupFacts:
    values = {"name": "demo", "version": "1.0", "layout": {"packages": ["demo"]}, "package": "demo",
              "py_api": None, "source_folder": "torch-project"}
    return SetupFacts(**{**values, **overrides})


def test_setup_py_decides_and_tool_buildkit_builds(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    settings = load_drop_in_settings(tmp_path, option_keys(), facts(py_api="cp39"))  # no pyproject.toml at all
    assert settings.project_name == "demo" and settings.static_version == "1.0" and settings.py_api == "cp39"
    assert settings.library_dependencies == (TORCH,) and settings.version_module == ""
    assert settings.source_dir == settings.build_dir / "torch-project"
    assert settings.source_dir not in settings.project_folders  # buildkit's own, inside the build folder
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n[tool.buildkit]\n'
                                             'build-dir = "out/{cache_tag}"\ncuda-arch-list = "8.0"\n')
    settings = load_drop_in_settings(tmp_path, option_keys(), facts())
    assert settings.build_dir.parent == tmp_path / "out" and settings.option_defaults == {"cuda-arch-list": "8.0"}


@pytest.mark.parametrize("table, message", [
    ('packages = ["demo"]\nversion-file = "v.txt"', "sets `packages`, `version-file`, which setup.py decides"),
    ("library-only = true", "sets `library-only`"),
    ('py-api = "cp310"', "py-api = 'cp310' in"),
])
def test_what_setup_py_decides_is_refused_in_the_table(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.buildkit]\n{table}\n")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_drop_in_settings(tmp_path, option_keys(), facts(py_api="cp39"))


@pytest.mark.parametrize("text, uses", [
    ("from buildkit.torch import BuildExtension, CppExtension\n", True),
    ("import os\n  import buildkit.torch as bt\n", True),
    ("from torch.utils.cpp_extension import BuildExtension\n", False),
    ("# from buildkit.torch import CppExtension (a comment)\nfrom buildkit import setup\n", False),
])
def test_a_setup_py_that_imports_buildkit_torch(tmp_path: Path, text: str, uses: bool) -> None:
    (tmp_path / "setup.py").write_text(text)
    assert uses_drop_in(tmp_path) is uses
    assert uses_drop_in(tmp_path / "missing") is False


# ------------------------------------------------------------ torch's facts

def test_the_stable_abi_cpp_extension_builds_for(tmp_path: Path) -> None:
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "cpp_extension.py").write_text('x = 1\nmin_supported_cpython = "0x030A0000"  # 3.10\n')
    assert cpp_extension_limited_api(tmp_path) == "3.10"
    (tmp_path / "utils" / "cpp_extension.py").write_text("nothing = None\n")
    assert cpp_extension_limited_api(tmp_path) is None


def tool(name: str, path: str, version: str) -> Tool:
    return Tool(name, Path(path), version)


@pytest.mark.parametrize("cxx, nvcc, check_abi, warned, error", [
    ("/usr/bin/g++-12", "13.0", True, [], None),
    ("/usr/bin/g++-12", "13.2", True, ["a minor version apart"], None),
    ("/usr/bin/g++-12", "12.8", True, [], "is CUDA 12.8, but torch 2.15.0+cu130 is a CUDA 13.0 build"),
    ("/opt/icpx", "13.0", True, ["is neither GCC nor Clang"], None),
    ("/opt/icpx", "13.0", False, [], None),  # TORCH_DONT_CHECK_COMPILER_ABI=1
])
def test_cpp_extensions_compiler_checks(cxx: str, nvcc: str, check_abi: bool, warned: list[str],
                                        error: str | None) -> None:
    torch = InstalledTorch("2.15.0+cu130", "13.0", Path("/site/torch"))
    compilers = Compilers(cxx=tool("C++ compiler", cxx, "12.2.0"), nvcc=tool("nvcc", "/cuda/bin/nvcc", nvcc))
    warnings, stop = compiler_findings(torch, compilers, cuda=True, check_abi=check_abi)
    assert [w for w in warnings if not any(part in w for part in warned)] == []
    assert len(warnings) == len(warned)
    assert (stop is None) if error is None else (error in stop)


def test_cuda_home_as_cpp_extension_finds_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from buildkit.config.options import load_options

    assert torch_env.find_cuda_home(load_options(None, {"CUDA_HOME": "/a", "CUDA_PATH": "/b"}), None) == "/a"
    assert torch_env.find_cuda_home(load_options(None, {"CUDA_PATH": "/b"}), "/c/bin/nvcc") == "/b"
    assert torch_env.find_cuda_home(load_options(None, {}), "/c/bin/nvcc") == "/c"
    monkeypatch.setattr(torch_env, "DEFAULT_CUDA_HOME", str(tmp_path / "none"))
    assert torch_env.find_cuda_home(load_options(None, {}), None) is None


def test_cpp_extensions_cuda_environment_reaches_cmake() -> None:
    from buildkit.config.options import load_options

    assert compiler_defines(load_options(None, {"CUDA_HOME": "/cuda", "CC": "gcc-12"})) == {
        "CMAKE_CUDA_COMPILER": "/cuda/bin/nvcc", "CUDAToolkit_ROOT": "/cuda", "CUDA_TOOLKIT_ROOT_DIR": "/cuda",
        "CMAKE_CUDA_HOST_COMPILER": "gcc-12"}
    # CUDACXX names the compiler, and the user's own -D the host compiler: theirs win.
    assert compiler_defines(load_options(None, {"CUDA_PATH": "/cuda", "CUDACXX": "/other/nvcc", "CC": "gcc",
                                                "CMAKE_CUDA_HOST_COMPILER": "g++-11"})) == {
        "CUDAToolkit_ROOT": "/cuda", "CUDA_TOOLKIT_ROOT_DIR": "/cuda"}
    assert compiler_defines(load_options(None, {})) == {}


def test_the_no_op_record_lists_the_sources_of_setup_pys_folders(tmp_path: Path) -> None:
    """A folder whose sources setup.py globs counts by its list of sources: an editor's save
    through a new file and a rename keeps it (the folder's time moves), a source added does not."""
    from buildkit.frontends import noop_record

    assert set(noop_record.LISTED_SUFFIXES) == set(LANGUAGES)
    folder = tmp_path / "csrc"
    folder.mkdir()
    (folder / "a.cpp").write_text("int a;\n")
    before = noop_record.inputs(str(tmp_path), True, [], [str(folder)])
    (folder / ".a.cpp.swp").write_text("editor state")
    (folder / "a.cpp.new").write_text("int a = 1;\n")
    (folder / "a.cpp.new").rename(folder / "a.cpp")
    assert noop_record.inputs(str(tmp_path), True, [], [str(folder)])["listings"] == before["listings"]
    (folder / "b.cu").write_text("")
    assert noop_record.inputs(str(tmp_path), True, [], [str(folder)])["listings"] == {str(folder): ["a.cpp", "b.cu"]}


def test_what_made_a_develop_more_than_a_no_op_is_named(tmp_path: Path) -> None:
    """A buildkit.torch develop that runs setup.py (it imports torch: seconds) says which of the
    no-op record's inputs changed; a module replaced in the package folder is none of them."""
    from buildkit.frontends import noop_record
    from buildkit.frontends.noop_finish import NO_BUILD

    root, build = tmp_path / "project", tmp_path / "project" / "build"
    csrc, package = root / "csrc", root / "pkg"
    for folder in (csrc, package, build):
        folder.mkdir(parents=True)
    (root / "setup.py").write_text("setup()\n")
    (csrc / "a.cpp").write_text("")
    (package / "_C.so").write_text("built")
    assert noop_record.changed_inputs(str(root), True, str(build)) == []  # no record: the first develop

    folders, packages, roots = [str(csrc)], [str(package)], [str(root)]
    noop_record.write_record(str(build), {
        "files": [], "folders": folders, "packages": packages, "roots": roots, "build_dir": str(build), **NO_BUILD,
        "inputs": noop_record.inputs(str(root), True, [], folders, packages=packages, roots=roots)})
    (package / "_C.so.new").write_text("rebuilt")
    (package / "_C.so.new").rename(package / "_C.so")  # as the install replaces a rebuilt module
    (package / "__pycache__").mkdir()
    (root / "notes.txt").write_text("")  # no module: the layout sees none
    (root / "scratch").mkdir()
    (root / "scratch" / "data.bin").write_text("")
    assert noop_record.changed_inputs(str(root), True, str(build)) == []

    (root / "setup.py").write_text("setup(name='x')\n")
    (csrc / "b.cu").write_text("")
    (package / "extra.py").write_text("")
    (root / "scratch" / "__init__.py").write_text("")  # a new top-level package, which find_packages() finds
    assert noop_record.changed_inputs(str(root), True, str(build)) == [
        "setup.py", "the sources in csrc", "the modules in pkg", "the top-level packages and modules in ."]
