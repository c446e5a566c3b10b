"""``buildkit.torch``: ``torch.utils.cpp_extension``'s setup.py API, built by buildkit.

A PyTorch extension project ports by changing its imports::

    -from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME
    +from buildkit.torch import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

setup.py stays the project's configuration; buildkit writes its extensions as a CMake
project in the build folder and builds that with Ninja, incrementally, with the compiler
cache; a wheel requires the torch it was built against, and ``options={"bdist_wheel":
{"py_limited_api": "cp39"}}`` gives one ``cp39-abi3`` wheel (buildkit's ``py-api``).
``buildkit develop`` builds in place and answers a no-op without running setup.py.
An argument cpp_extension takes that buildkit does not build stops with one error that
names it.  docs/migration/from-cpp-extension.md has the details.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from buildkit.builder.build_state import TORCH_PROJECT
from buildkit.builder.configure.build_env import site_dirs
from buildkit.builder.configure.torch_env import find_cuda_home, installed_torch
from buildkit.builder.toolchain.cuda_toolkit import CudaRequest, choose_toolkit
from buildkit.config.drop_in import tool_settings
from buildkit.config.options import load_options, option_keys
from buildkit.errors import reporting_errors
from buildkit.frontends.setuptools.commands.torch_build_ext import BuildExtension
from buildkit.package.torch_extension import TorchExtension


def CppExtension(name: str, sources: Sequence[str], *args: Any, **kwargs: Any) -> TorchExtension:
    """A C++ extension module: cpp_extension's ``CppExtension``."""
    return reporting_errors(lambda: TorchExtension(name, sources, *args, cuda=False, **kwargs))


def CUDAExtension(name: str, sources: Sequence[str], *args: Any, **kwargs: Any) -> TorchExtension:
    """A C++/CUDA extension module, linked to torch's CUDA libraries: cpp_extension's ``CUDAExtension``."""
    return reporting_errors(lambda: TorchExtension(name, sources, *args, cuda=True, **kwargs))


def include_paths(device_type: str = "cpu") -> list[str]:
    """torch's header folders (cpp_extension's ``include_paths``; ``"cuda"`` adds the toolkit's).
    buildkit.torch extensions get them without asking."""
    torch = installed_torch()
    folders = [str(torch.folder / "include"), str(torch.folder / "include" / "torch" / "csrc" / "api" / "include")] \
        if torch else []
    if device_type == "cuda" and CUDA_HOME:
        folders.append(f"{CUDA_HOME}/include")
    return folders


def library_paths(device_type: str = "cpu") -> list[str]:
    """torch's library folder (cpp_extension's ``library_paths``; ``"cuda"`` adds the toolkit's:
    ``lib64``, or ``lib`` where only that is there, as NVIDIA's wheels have it)."""
    torch = installed_torch()
    folders = [str(torch.folder / "lib")] if torch else []
    if device_type == "cuda" and CUDA_HOME:
        only_lib = not os.path.isdir(f"{CUDA_HOME}/lib64") and os.path.isdir(f"{CUDA_HOME}/lib")
        folders.append(f"{CUDA_HOME}/{'lib' if only_lib else 'lib64'}")
    return folders


def _cuda_home() -> str | None:
    """cpp_extension's ``CUDA_HOME``: the CUDA toolkit, for a CUDA build of torch; None for a CPU build.
    It is the toolkit the build compiles with: under ``cuda-toolkit`` ``wheel`` (or ``auto`` without
    a system toolkit of torch's major) the prefix of NVIDIA's wheels, else cpp_extension's search."""
    torch = installed_torch()
    if torch is None or torch.cuda is None:
        return None
    root = Path.cwd()  # setup.py's folder: pip, build and `buildkit develop` run it there
    options = load_options(tool_settings(root, option_keys(), TORCH_PROJECT) if (root / "setup.py").is_file()
                           else None)
    choice = choose_toolkit(options.cuda_toolkit, options, site_dirs(root), CudaRequest(True, torch.cuda, drop_in=True))
    if choice.toolkit is not None and choice.from_wheels:
        return str(choice.toolkit.root)
    return find_cuda_home(options, shutil.which("nvcc"))


CUDA_HOME = reporting_errors(_cuda_home)

__all__ = ["CUDA_HOME", "BuildExtension", "CUDAExtension", "CppExtension", "include_paths",
           "library_paths"]
