"""The CMake project buildkit writes for a ``buildkit.torch`` project (cpp_extension's setup.py API).

A ``setup.py`` that imports ``CppExtension``/``CUDAExtension``/``BuildExtension`` from
``buildkit.torch`` describes its extensions as cpp_extension does; the front end turns
each into a :class:`TorchModule` (flags already sorted per language, paths absolute).
This module writes them as one CMake project, one ``buildkit_torch_extension`` call
(cmake/BuildkitTorch.cmake) per module, into a folder of the build folder: rewritten
only when its text changes, so that running setup.py again over unchanged extensions
neither reconfigures nor rebuilds anything.

What cpp_extension adds to every extension comes from BuildkitTorch.cmake (torch's
headers and libraries, ``TORCH_EXTENSION_NAME``, ``TORCH_API_INCLUDE_EXTENSION_H``,
torch's C++ standard for C++ and CUDA sources, cpp_extension's nvcc flags); what the
extension itself asks for is written here.  Flags keep their order and their
repetitions (``-Xcompiler a -Xcompiler b``): each language's list is one ``SHELL:``
option, which CMake neither splits nor de-duplicates.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from buildkit._util.fileutil import write_text_if_changed
from buildkit.config.options import BuildOptions

# Source files by the CMake language that compiles them (cpp_extension's, less SYCL,
# HIP and Objective-C++, which buildkit does not build).
LANGUAGES = {".c": "C", ".cc": "CXX", ".cpp": "CXX", ".cxx": "CXX", ".c++": "CXX", ".C": "CXX", ".cu": "CUDA"}
# Python_add_library(USE_SABI) came with CMake 3.26; the rest needs 3.24 (buildkit's minimum).
MINIMUM_CMAKE = "3.24"
MINIMUM_CMAKE_SABI = "3.26"
HEADER = "# Written by buildkit from setup.py (buildkit.torch): do not edit, setup.py is the source.\n"


@dataclass(frozen=True)
class TorchModule:
    """One extension module of ``ext_modules`` (a ``CppExtension`` or ``CUDAExtension``)."""

    name: str  # dotted module name, e.g. "extension_cpp._C"
    sources: tuple[str, ...]  # absolute paths
    cuda: bool = False  # a CUDAExtension: links torch's CUDA libraries, needs nvcc
    include_dirs: tuple[str, ...] = ()  # absolute paths, before torch's own
    define_macros: tuple[tuple[str, str | None], ...] = ()  # (name, value); None: defined without a value
    undef_macros: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()
    library_dirs: tuple[str, ...] = ()
    cxx_flags: tuple[str, ...] = ()  # C and C++ sources
    nvcc_flags: tuple[str, ...] = ()  # CUDA sources
    link_flags: tuple[str, ...] = ()
    # cpp_extension's dlink=True: device code linked into the module (relocatable device code).
    dlink: bool = False
    dlink_flags: tuple[str, ...] = ()
    # "3.9": built for the stable ABI of Python 3.9 (py_limited_api=True); None: for this interpreter.
    limited_api: str | None = None
    abi_suffix: bool = True  # False: <name>.so (no_python_abi_suffix=True)
    # nvcc flags name architectures themselves (cpp_extension then adds none of its own).
    own_architectures: bool = False

    @property
    def module(self) -> str:
        return self.name.rpartition(".")[2]

    @property
    def destination(self) -> str:
        """The folder of the module, relative to the package root ("." for a top-level module)."""
        return self.name.rpartition(".")[0].replace(".", "/") or "."

    def languages(self) -> set[str]:
        return {LANGUAGES[suffix_of(source)] for source in self.sources} | ({"CUDA"} if self.cuda else set())


@dataclass(frozen=True)
class TorchProject:
    """Every extension module of one setup.py."""

    name: str
    modules: tuple[TorchModule, ...]

    def languages(self) -> list[str]:
        used = set().union(*(module.languages() for module in self.modules))
        return [language for language in ("C", "CXX", "CUDA") if language in used or language == "CXX"]


def compiler_defines(options: BuildOptions) -> dict[str, str]:
    """What cpp_extension's environment says about CUDA, for CMake: CUDA_HOME (or CUDA_PATH) is
    the toolkit (for CMake's CUDAToolkit and torch's FindCUDA) whose nvcc compiles when CUDACXX
    is unset, and CC is nvcc's host compiler (cpp_extension passes ``-ccbin $CC``).  A ``-D`` of
    the user's own for any of them wins."""
    defines = dict(options.cmake_defines)
    found = {}
    toolkit = options.cuda_home or options.cuda_path
    if toolkit and not options.cudacxx and "CMAKE_CUDA_COMPILER" not in defines:
        found["CMAKE_CUDA_COMPILER"] = os.path.join(toolkit, "bin", "nvcc")
    for name in ("CUDAToolkit_ROOT", "CUDA_TOOLKIT_ROOT_DIR"):
        if toolkit and name not in defines:
            found[name] = toolkit
    if options.cc and "CMAKE_CUDA_HOST_COMPILER" not in defines:
        found["CMAKE_CUDA_HOST_COMPILER"] = options.cc
    return found


def suffix_of(source: str) -> str:
    """The source's suffix as it picks the language (``.C`` is C++, ``.c`` is C)."""
    suffix = os.path.splitext(source)[1]
    return suffix if suffix in LANGUAGES else suffix.lower()


def cmake_lists(project: TorchProject) -> str:
    """The CMakeLists.txt that builds ``project``."""
    sabi = any(module.limited_api for module in project.modules)
    lines = [HEADER.rstrip("\n"),
             f"cmake_minimum_required(VERSION {MINIMUM_CMAKE_SABI if sabi else MINIMUM_CMAKE})",
             f"project({_quote(_project_name(project.name))} LANGUAGES {' '.join(project.languages())})",
             "include(BuildkitTorch)"]
    if "CUDA" in project.languages():
        lines.append("find_package(CUDAToolkit REQUIRED)  # its library folder, as cpp_extension's library_paths()")
    for module in project.modules:
        lines += ["", *_module_lines(module)]
    return "\n".join(lines) + "\n"


def write_cmake_project(folder: Path, project: TorchProject) -> bool:
    """Write ``folder/CMakeLists.txt`` when its text changed (an unchanged one keeps its time,
    so CMake does not regenerate the build); whether it did."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_text_if_changed(folder / "CMakeLists.txt", cmake_lists(project))


def _module_lines(module: TorchModule) -> list[str]:
    target = _quote(module.name)
    head = [f"buildkit_torch_extension({target} MODULE NAME {_quote(module.module)}"]
    if module.limited_api:
        head.append(f"USE_SABI {module.limited_api}")
    if not module.abi_suffix:
        head.append("NO_SOABI")
    lines = [" ".join(head) + " SOURCES", *(f"  {_quote(source)}" for source in module.sources)]
    lines[-1] += ")"
    properties = []
    if module.languages() & {"C", "CXX"}:
        properties.append("CXX_EXTENSIONS OFF")  # -std=c++NN, as cpp_extension passes it
    if module.dlink:
        properties.append("CUDA_SEPARABLE_COMPILATION ON CUDA_RESOLVE_DEVICE_SYMBOLS ON")
    if module.own_architectures:
        properties.append("CUDA_ARCHITECTURES OFF")  # the nvcc flags name them
    if properties:
        lines.append(f"set_target_properties({target} PROPERTIES {' '.join(properties)})")
    lines += _command("target_include_directories", target, map(_quote, module.include_dirs))
    lines += _command("target_compile_definitions", target,
                      (_quote(name if value is None else f"{name}={value}") for name, value in module.define_macros))
    # setuptools' order: define_macros' -D, undef_macros' -U, then extra_compile_args (so -U
    # beats define_macros, and a -D in extra_compile_args beats -U). CMake puts definitions first.
    undefine = [f"-U{name}" for name in module.undef_macros]
    lines += _command("target_compile_options", target, [
        *_shell("$<$<COMPILE_LANGUAGE:C,CXX>:", [*undefine, *module.cxx_flags]),
        *_shell("$<$<COMPILE_LANGUAGE:CUDA>:", [*undefine, *module.nvcc_flags])])
    # torch's (and for CUDA the toolkit's) library folders after the extension's own, as
    # cpp_extension adds them: `libraries=["torch_cuda", "cublas"]` links without more.
    folders = [*map(_quote, module.library_dirs), '"${TORCH_INSTALL_PREFIX}/lib"',
               *(['"${CUDAToolkit_LIBRARY_DIR}"'] if "CUDA" in module.languages() else [])]
    lines += _command("target_link_directories", target, folders)
    lines += _command("target_link_libraries", target, map(_quote, module.libraries))
    lines += _command("target_link_options", target, [*_shell("", module.link_flags),
                                                      *_shell("$<DEVICE_LINK:", module.dlink_flags)])
    destination = _quote(module.destination)
    lines.append(f"install(TARGETS {target} LIBRARY DESTINATION {destination} RUNTIME DESTINATION {destination})")
    return lines


def _command(name: str, target: str, arguments: Iterable[str]) -> list[str]:
    """``name(<target> PRIVATE <arguments>)``, one argument (already in CMake's syntax) a line."""
    lines = [f"  {argument}" for argument in arguments]
    if not lines:
        return []
    return [f"{name}({target} PRIVATE", *lines[:-1], lines[-1] + ")"]


def _shell(within: str, flags: Iterable[str]) -> list[str]:
    """``flags`` as one quoted CMake argument that passes them as they are, in their order
    and with their repetitions (``SHELL:``), inside the generator expression that ``within``
    opens ("" for none)."""
    flags = list(flags)
    if not flags:
        return []
    option = _escape("SHELL:" + " ".join(shlex.quote(flag) for flag in flags))
    if not within:
        return [f'"{option}"']
    # Inside a generator expression `>` and `,` would end or split it (`;` is escaped already:
    # `$<SEMICOLON>` would split the option into two list items).
    option = option.replace(">", "$<ANGLE-R>").replace(",", "$<COMMA>")
    return [f'"{within}{option}>"']


def _quote(text: str) -> str:
    """``text`` as one quoted CMake argument, taken literally (no variable is expanded)."""
    return f'"{_escape(text)}"'


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace(";", "\\;")


def _project_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return cleaned or "extension"
