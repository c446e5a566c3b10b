"""``install``: a regular, non-editable install, through a wheel.

setuptools' own ``install`` path is deprecated and writes an egg; when a user runs
``python setup.py install`` we build the wheel and hand it to pip, which gives the
same result as ``pip install .``.  bdist_wheel itself runs ``install`` with a
staging ``--root``: that inner call keeps setuptools' behaviour.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, cast

from setuptools.command.install import install as _install

from buildkit.errors import BuildkitError

if TYPE_CHECKING:
    from setuptools.command.bdist_wheel import bdist_wheel


class Install(_install):
    description = "build a wheel and install it with pip (not editable)"

    def run(self) -> None:
        if self.root:  # staging for bdist_wheel (or a packager's --root): a plain copy
            super().run()
            return
        with tempfile.TemporaryDirectory(prefix="buildkit-install-") as tmp:
            # Known by construction: the bdist_wheel command (buildkit's BdistWheel, a subclass).
            wheel_cmd = cast("bdist_wheel", self.reinitialize_command("bdist_wheel"))
            wheel_cmd.dist_dir = tmp
            self.run_command("bdist_wheel")
            wheels = sorted(Path(tmp).glob("*.whl"))
            if not wheels:
                raise BuildkitError("bdist_wheel produced no wheel to install.", "Rerun with VERBOSE=1 to see why.")
            command = [sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", str(wheels[0])]
            if self.user:
                command.append("--user")
            if subprocess.run(command, check=False).returncode != 0:
                raise BuildkitError(f"pip could not install {wheels[0].name}.", "Read pip's message above.")
