"""Symbolic links in what a wheel or an sdist ships: never content from outside the project.

A wheel cannot hold a link, and an sdist ships each file's content (see
docs/wheel-contents.md), so a link in the package tree, in what CMake installed or in
the sdist's file list ships its target's bytes.  A target outside the project (or,
for an installed link, outside the install prefix) would put a file of the build
machine (``/etc/passwd``, a home folder's key) into a published archive without a
word, so it stops the build, naming the link and its target, unless
``[tool.buildkit] allow-outside-links`` names the link.  A dangling link or a loop
stops it too: there is nothing to ship.

Callers list their trees with ``os.scandir`` and ask only about the entries that
are links: a tree of 8,000 installed headers costs nothing more.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Collection, Sequence

from buildkit.errors import BuildkitError

SETTINGS_KEY = "allow-outside-links"


class LinkGuard:
    """Checks links below ``names_from`` (the project, or a staging tree laid out like it):
    each must resolve inside one of ``inside``, unless ``allowed`` names it by its path
    relative to ``names_from`` (posix)."""

    def __init__(self, names_from: str | os.PathLike[str], inside: Sequence[str | os.PathLike[str]],
                 allowed: Collection[str] = ()) -> None:
        self.names_from = os.path.abspath(names_from)
        # Real paths: a project reached through a linked folder (/home -> /data/home) still contains its files.
        self.inside = tuple(os.path.realpath(folder) for folder in inside)
        self.allowed = frozenset(allowed)

    def name_of(self, path: str | os.PathLike[str]) -> str:
        """The link's path as the error and the allow setting spell it."""
        relative = os.path.relpath(os.path.abspath(path), self.names_from)
        return os.path.abspath(path) if relative.startswith(os.pardir) else relative.replace(os.sep, "/")

    def check_link(self, path: str | os.PathLike[str]) -> None:
        """Refuse the link at ``path`` (known to be one) when it dangles, loops or leads outside."""
        name = self.name_of(path)
        target = os.readlink(path)
        try:
            real = os.path.realpath(path, strict=True)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise BuildkitError(f"{name} is a symbolic link to {target!r} that never ends: its chain of links "
                                    "loops back on itself.",
                                    "Point the link at a real file of the project, or remove it.") from None
            raise BuildkitError(f"{name} is a dangling symbolic link: its target {target!r} does not exist, so "
                                "there is nothing to ship in its place.",
                                "Create the target, point the link at a file that exists, or remove the "
                                "link.") from None
        if name not in self.allowed:
            self._refuse_outside(name, f"a symbolic link to {target!r}", real)

    def check_path(self, path: str | os.PathLike[str]) -> None:
        """For a file read by name (a readme, a license): the file itself may be a link, or
        lie below a linked folder; either way its real location must be inside."""
        if os.path.islink(path):
            self.check_link(path)
            return
        real = os.path.realpath(path)
        name = self.name_of(path)
        if name not in self.allowed:
            self._refuse_outside(name, "reached through a linked folder", real)

    def _refuse_outside(self, name: str, what: str, real: str) -> None:
        if self.contains(real):
            return
        raise BuildkitError(
            f"{name} is {what}, which resolves to {real}: outside the project ({self.describe_inside()}). "
            "Wheels and sdists ship a link's content, so that file of this machine would be published.",
            f"Copy the file into the project and drop the link; or, if shipping that content is intended, name "
            f"the link in pyproject.toml: [tool.buildkit] {SETTINGS_KEY} = [\"{name}\"].")

    def contains(self, real: str) -> bool:
        return any(real == folder or real.startswith(folder.rstrip(os.sep) + os.sep) for folder in self.inside)

    def describe_inside(self) -> str:
        return " or ".join(self.inside)
