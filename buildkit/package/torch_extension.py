"""cpp_extension's ``CppExtension`` and ``CUDAExtension``, as ``buildkit.torch`` makes them.

A :class:`TorchExtension` is a setuptools ``Extension`` (setup.py may read its
attributes; an sdist ships its ``sources`` and ``depends``) that CMake builds: it
checks its arguments when setup.py makes it, so that an argument buildkit does not
build stops there, named, and turns into a
:class:`~buildkit.builder.configure.torch_project.TorchModule` with cpp_extension's
meaning: ``extra_compile_args`` as one list for every compiler or a table per compiler
(``cxx``, ``nvcc``, ``nvcc_dlink``), relative paths from setup.py's folder, and for
``py_limited_api=True`` the stable ABI, with torch_python not linked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from buildkit._util import console
from buildkit.builder.configure.torch_project import LANGUAGES, TorchModule, suffix_of
from buildkit.errors import ConfigError
from buildkit.package.extensions import CMakeBuiltExtension

# setuptools.Extension's keywords buildkit builds with (`language` and `depends` are taken
# and left to CMake: the language comes from each source's suffix, and ninja finds the
# headers a source includes); CUDAExtension adds two of its own.
LIST_KEYWORDS = ("include_dirs", "undef_macros", "library_dirs", "libraries", "extra_link_args", "depends")
KEYWORDS = frozenset({*LIST_KEYWORDS, "define_macros", "extra_compile_args", "py_limited_api", "language"})
CUDA_KEYWORDS = frozenset({"dlink", "dlink_libraries"})
COMPILERS = ("cxx", "nvcc", "nvcc_dlink")  # the keys of an extra_compile_args table
HINT = ("buildkit.torch builds what cpp_extension's CppExtension and CUDAExtension build with these arguments: "
        "sources, include_dirs, define_macros, undef_macros, library_dirs, libraries, extra_compile_args (a list, "
        "or a table of `cxx`, `nvcc` and `nvcc_dlink` lists), extra_link_args, py_limited_api, depends, language, "
        "and for CUDAExtension dlink and dlink_libraries (docs/migration/from-cpp-extension.md).")


class TorchExtension(CMakeBuiltExtension):
    """One extension module of a buildkit.torch ``setup.py``."""

    # What setuptools' hook looks for without importing this module (frontends/setuptools/torch_metadata.py).
    buildkit_torch = True

    def __init__(self, name: str, sources: Sequence[str], *args: Any, cuda: bool, **kwargs: Any):
        kind = "CUDAExtension" if cuda else "CppExtension"
        where = f"{kind}({name!r}, ...)"
        if args:
            raise ConfigError(f"{where} got {len(args)} positional argument(s) after `sources`.",
                              "Pass setuptools.Extension's other arguments by keyword. " + HINT)
        allowed = KEYWORDS | (CUDA_KEYWORDS if cuda else frozenset())
        unknown = sorted(set(kwargs) - allowed)
        if unknown:
            raise ConfigError(f"{where} got {', '.join(f'`{key}`' for key in unknown)}, which buildkit.torch does "
                              "not build.", HINT)
        if not isinstance(name, str) or not all(part.isidentifier() for part in name.split(".")):
            raise ConfigError(f"{where}: the name must be a dotted module name, such as `pkg._C`.", HINT)
        self.cuda = cuda
        self.dlink_libraries = _strings(kwargs.pop("dlink_libraries", []), "dlink_libraries", where)
        # cpp_extension's CUDAExtension: dlink=True or dlink_libraries link device code with -dlto;
        # its BuildExtension device-links whenever extra_compile_args names an nvcc_dlink list.
        self.dlink = bool(kwargs.pop("dlink", False) or self.dlink_libraries)
        self.compile_args = _compile_args(kwargs.get("extra_compile_args", []), where)
        self.device_link = self.dlink or "nvcc_dlink" in (kwargs.get("extra_compile_args") or [])
        self.macros = _macros(kwargs.get("define_macros", []), where)
        for keyword in LIST_KEYWORDS:
            _strings(kwargs.get(keyword, []), keyword, where)
        sources = _strings(sources, "sources", where)
        if not sources:
            raise ConfigError(f"{where} lists no sources.", HINT)
        unbuilt = [source for source in sources if suffix_of(source) not in LANGUAGES]
        if unbuilt:
            raise ConfigError(
                f"{where} lists {', '.join(unbuilt)}: buildkit.torch compiles C (.c), C++ (.cpp, .cc, .cxx) and "
                "CUDA (.cu) sources; HIP, SYCL and Objective-C++ sources it does not build.", HINT)
        super().__init__(name)
        self.sources = list(sources)
        for keyword in (*LIST_KEYWORDS, "define_macros"):
            setattr(self, keyword, list(kwargs.get(keyword, [])))
        self.extra_compile_args = kwargs.get("extra_compile_args", [])
        self.py_limited_api = bool(kwargs.get("py_limited_api", False))
        self.language = "c++"

    def module(self, root: Path, *, limited_api: str | None, abi_suffix: bool, torch_cuda: str | None) -> TorchModule:
        """What CMake builds for this extension, with relative paths taken from ``root`` (setup.py's
        folder); ``limited_api`` the stable ABI's version ("3.9") when ``py_limited_api`` applies;
        ``torch_cuda`` the CUDA version of torch's build (device linking uses link-time optimization
        from CUDA 11.2, as cpp_extension does)."""
        cxx, nvcc, dlink = (self.compile_args[compiler] for compiler in COMPILERS)
        if limited_api:  # the version comes from py-api (cpp_extension's own define comes after the user's)
            cxx, nvcc = (self._without_limited_api_define(flags) for flags in (cxx, nvcc))
        if self.dlink:
            dlink = [*dlink, *(["-dlto"] if torch_cuda and _version(torch_cuda) >= (11, 2) else []),
                     *(f"-L{_absolute(root, folder)}" for folder in self.library_dirs),
                     *(f"-l{library}" for library in self.dlink_libraries)]
        return TorchModule(
            self.name, tuple(_absolute(root, source) for source in self.sources), cuda=self.cuda,
            include_dirs=tuple(_absolute(root, folder) for folder in self.include_dirs),
            define_macros=self.macros, undef_macros=tuple(self.undef_macros), libraries=tuple(self.libraries),
            library_dirs=tuple(_absolute(root, folder) for folder in self.library_dirs),
            cxx_flags=tuple(cxx), nvcc_flags=tuple(nvcc), link_flags=tuple(self.extra_link_args),
            dlink=self.device_link, dlink_flags=tuple(dlink), limited_api=limited_api, abi_suffix=abi_suffix,
            # cpp_extension adds no architectures of its own when the nvcc flags name some.
            own_architectures=any("arch" in flag and "TORCH_EXTENSION_NAME" not in flag for flag in nvcc))

    def _without_limited_api_define(self, flags: list[str]) -> list[str]:
        kept = [flag for flag in flags if not flag.startswith("-DPy_LIMITED_API")]
        if len(kept) != len(flags):
            dropped = sorted(set(flags) - set(kept))
            console.info(f"{self.name}: {', '.join(dropped)} left out of extra_compile_args: the stable ABI's "
                         "version comes from py-api (setup.py's bdist_wheel py_limited_api)")
        return kept


def _strings(value: Any, keyword: str, where: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{keyword}` must be a list of strings, not {value!r}.", HINT)
    return list(value)


def _compile_args(value: Any, where: str) -> dict[str, list[str]]:
    """``extra_compile_args`` per compiler: one list is every compiler's (cpp_extension passes
    it to nvcc too), a table names each one's (a compiler it leaves out gets nothing)."""
    if not isinstance(value, Mapping):
        flags = _strings(value, "extra_compile_args", where)
        return {"cxx": flags, "nvcc": list(flags), "nvcc_dlink": []}
    unknown = sorted(set(value) - set(COMPILERS))
    if unknown:
        sycl = " (SYCL sources are not built by buildkit.torch)" if "sycl" in unknown else ""
        raise ConfigError(f"{where}: extra_compile_args names the compiler(s) {', '.join(map(repr, unknown))}"
                          f"{sycl}; buildkit.torch knows {', '.join(map(repr, COMPILERS))}.", HINT)
    return {compiler: _strings(value.get(compiler, []), f"extra_compile_args[{compiler!r}]", where)
            for compiler in COMPILERS}


def _macros(value: Any, where: str) -> tuple[tuple[str, str | None], ...]:
    """setuptools' ``define_macros``: (name,) or (name, value) pairs, value None for a bare define."""
    macros = []
    for item in value if isinstance(value, Sequence) and not isinstance(value, str) else [value]:
        if (not isinstance(item, Sequence) or isinstance(item, str) or len(item) not in (1, 2)
                or not isinstance(item[0], str) or (len(item) == 2 and not isinstance(item[1], (str, type(None))))):
            raise ConfigError(f"{where}: define_macros holds {item!r}; each must be a (name, value) pair, value a "
                              "string or None.", HINT)
        macros.append((item[0], item[1] if len(item) == 2 else None))
    return tuple(macros)


def _absolute(root: Path, path: str | os.PathLike[str]) -> str:
    return os.path.normpath(os.path.join(root, path))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2] if part.isdigit())
