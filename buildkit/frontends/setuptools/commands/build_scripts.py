"""``build_scripts`` that copies a compiled program, or an empty file, as it is.

setuptools reads every script as Python source to rewrite its ``#!`` line, and a
native executable installed to the scripts folder (scikit-build-core's
``SKBUILD_SCRIPTS_DIR``) stopped the wheel build with "SyntaxError: invalid or
missing encoding declaration".  An empty one (``file(TOUCH)``, as in
scikit-build-core's filepath_pure sample) it skipped, then failed on the missing
copy with "No such file or directory".  Both are copied byte for byte, their mode
kept; every other script goes through setuptools as before.
"""

from __future__ import annotations

import os

# setuptools has no build_scripts of its own: it runs distutils', which importing
# setuptools first provides (its vendored copy; Python 3.12 has no distutils).
import setuptools  # noqa: F401  imported for its side effect: distutils' commands

# isort: split
from distutils.command.build_scripts import build_scripts as _build_scripts

from buildkit.package.contents import is_native_binary


class BuildScripts(_build_scripts):
    def copy_scripts(self) -> tuple[list[str], list[str]]:
        scripts = list(self.scripts or ())
        programs = [script for script in scripts if os.path.getsize(script) == 0 or is_native_binary(script)]
        self.scripts = [script for script in scripts if script not in programs]
        try:
            listed: tuple[list[str], list[str]] = ([], [])
            if self.scripts:
                listed = super().copy_scripts()  # type: ignore[no-untyped-call]  # unannotated in the stubs
            outfiles, updated = listed
        finally:
            self.scripts = scripts
        self.mkpath(self.build_dir)
        for program in programs:
            target = os.path.join(self.build_dir, os.path.basename(program))
            outfiles.append(target)
            _, copied = self.copy_file(program, target, preserve_mode=True)
            if copied:
                updated.append(target)
        return outfiles, updated
