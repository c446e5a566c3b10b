"""``build_ext``: run the CMake build, then build the ``_C`` stub and place CMake's extensions."""

from __future__ import annotations

import filecmp
import os
import shutil
from pathlib import Path

from setuptools import Extension
from setuptools.command.build_ext import build_ext as _build_ext

from buildkit._util import console
from buildkit.errors import BuildkitError
from buildkit.frontends.setuptools.distribution import project_of
from buildkit.package.contents import is_native_binary
from buildkit.package.extensions import CMakeBuiltExtension
from buildkit.package.layout import installed_module_path


class BuildExt(_build_ext):
    description = "build the CMake project, the _C stub and copy CMake-built extension modules"

    def run(self) -> None:
        project_of(self.distribution).build()
        super().run()

    def build_extensions(self) -> None:
        # Some interpreters (pyenv, conda) put an absolute -rpath to their own lib/
        # into LDSHARED; it would ship in the wheel and point at the build machine.
        self.compiler.linker_so = drop_absolute_rpaths(self.compiler.linker_so)
        super().build_extensions()

    def build_extension(self, ext: Extension) -> None:
        if isinstance(ext, CMakeBuiltExtension):
            self._place_cmake_extension(ext)
        else:
            self._drop_damaged_output(ext)
            super().build_extension(ext)

    def _drop_damaged_output(self, ext: Extension) -> None:
        """setuptools skips an extension whose output is newer than its sources, even when
        that output is no compiled module any more (cut short, overwritten): such a one is
        built again."""
        path = self.get_ext_fullpath(ext.name)
        if os.path.isfile(path) and not is_native_binary(path):
            console.warn(f"building {ext.name} again: {path} is no compiled module (it was damaged)")
            os.unlink(path)

    def get_ext_filename(self, fullname: str) -> str:
        """A CMake-built module keeps the suffix CMake gave it: setuptools' name has this
        interpreter's suffix, and a ``.abi3.so`` copied in place under it shadowed every
        later build of the module (Python imports ``.cpython-3XY-...so`` first)."""
        ext = self.ext_map.get(fullname)  # asked by dotted name, and by its last part alone
        if isinstance(ext, CMakeBuiltExtension):
            built = installed_module_path(project_of(self.distribution).target.package_root, ext.name)
            if built is not None:
                return os.path.join(*fullname.split(".")[:-1], built.name)
        name: str = super().get_ext_filename(fullname)  # type: ignore[no-untyped-call]  # unannotated in the stubs
        return name

    def _place_cmake_extension(self, ext: CMakeBuiltExtension) -> None:
        project = project_of(self.distribution)
        built = installed_module_path(project.target.package_root, ext.name)
        if built is None:
            raise BuildkitError(
                f"CMake did not install the extension module {ext.name} into the package tree.",
                f"Install it with `install(TARGETS ... DESTINATION <dir of {ext.name}>)` in CMake, "
                "or drop it from [tool.buildkit] cmake-extensions.")
        target = Path(self.get_ext_fullpath(ext.name))
        if target.resolve() == built.resolve():
            return  # in-place build: CMake's install already put it there
        if target.exists() and filecmp.cmp(built, target, shallow=False):
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)


def drop_absolute_rpaths(command: list[str]) -> list[str]:
    kept: list[str] = []
    for arg in command:
        if arg.startswith("-Wl,-rpath,") and not arg[len("-Wl,-rpath,"):].startswith(("$ORIGIN", "@loader_path")):
            continue
        if arg.startswith("-Wl,-R/"):
            continue
        kept.append(arg)
    return kept
