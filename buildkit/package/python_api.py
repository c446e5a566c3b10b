"""``py-api``: which Python API a wheel's modules are built for, with scikit-build-core's
``wheel.py-api`` meaning.

* ``cp3X``: the stable ABI of CPython 3.X and later.  Where it applies (CPython, at least
  3.X, GIL-enabled) the wheel is tagged ``cp3X-abi3`` and CMake gets the limited API's
  version (``3.X``) and FindPython's component (``Development.SABIModule``), so that
  ``Python_add_library(... USE_SABI ${SKBUILD_SABI_VERSION})`` or
  ``nanobind_add_module(... STABLE_ABI)`` build for it.  Where it does not (another
  implementation, an older interpreter, a free-threaded one) the wheel gets the
  interpreter's own tag and both variables are empty, and buildkit says why.
* A free-threaded CPython 3.15 or later has a stable ABI of its own (PEP 803, ``abi3t``,
  modules ending ``.abi3t.so``): ``cp315`` or later gives ``cp3X-abi3t``.  Older
  free-threaded interpreters have none.
* ``py3`` (or ``py2.py3``): modules that do not use Python's C API at all (loaded with
  ctypes): a ``py3-none-<platform>`` wheel.

One function decides it from the interpreter's facts, so the rules are tested without
such interpreters.
"""

from __future__ import annotations

import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass

from buildkit.config.value_rules import PY_API_FORM
from buildkit.package.contents import EXTENSION_MODULE

SABI_COMPONENT = "Development.SABIModule"
FREE_THREADED_SABI_SINCE = 15  # PEP 803: abi3t from CPython 3.15


@dataclass(frozen=True)
class PythonApi:
    """What ``py-api`` means under one interpreter."""

    requested: str | None
    python_tag: str | None = None  # "cp312" or "py3"; None: the interpreter's own tags
    abi_tag: str | None = None  # "abi3", "abi3t" or "none"
    sabi_version: str = ""  # "3.12" when modules are built for the stable ABI, else ""
    ignored_because: str = ""  # why ``requested`` gives the interpreter's own tags

    @property
    def stable_abi(self) -> bool:
        return self.abi_tag in ("abi3", "abi3t")

    @property
    def sabi_component(self) -> str:
        return SABI_COMPONENT if self.stable_abi else ""

    @property
    def limited_api_macro(self) -> tuple[str, str] | None:
        """The C macro that builds a setuptools extension (the ``_C`` stub) for it."""
        if not self.stable_abi:
            return None
        major, minor = (int(part) for part in self.sabi_version.split("."))
        name = "Py_TARGET_ABI3T" if self.abi_tag == "abi3t" else "Py_LIMITED_API"
        return name, f"0x{major:02X}{minor:02X}0000"

    def modules_outside(self, names: Iterable[str]) -> list[str]:
        """The extension modules among ``names`` (paths in a wheel) that are not built for this
        stable ABI: an abi3 wheel holding one would install a module for one interpreter only."""
        if not self.stable_abi:
            return []
        return [name for name in names if EXTENSION_MODULE.search(name) and not name.endswith(f".{self.abi_tag}.so")]

    def defines(self, skbuild: bool) -> dict[str, str]:
        """CMake's view: buildkit's names always, scikit-build-core's for its layout."""
        defines = {"BUILDKIT_SABI_VERSION": self.sabi_version, "BUILDKIT_SABI_COMPONENT": self.sabi_component}
        if skbuild:
            defines |= {"SKBUILD_SABI_VERSION": self.sabi_version, "SKBUILD_SABI_COMPONENT": self.sabi_component}
        return defines


def resolve(requested: str | None, *, implementation: str, version: tuple[int, int],
            free_threaded: bool) -> PythonApi:
    """What ``requested`` gives under an interpreter of ``implementation`` (``cpython``...),
    ``version`` (major, minor) and build."""
    if requested is None:
        return PythonApi(None)
    match = PY_API_FORM.match(requested)
    if match is None:
        raise ValueError(requested)  # the setting's check refuses it before
    if match.group("minor") is None:
        return PythonApi(requested, python_tag=requested, abi_tag="none")
    minor = int(match.group("minor"))
    running = f"{implementation} {version[0]}.{version[1]}{' (free-threaded)' if free_threaded else ''}"
    if implementation != "cpython":
        return PythonApi(requested, ignored_because=f"{running} has no CPython stable ABI")
    if (version[0], version[1]) < (3, minor):
        return PythonApi(requested, ignored_because=f"{running} is older than the stable ABI it asks for, 3.{minor}")
    if free_threaded:
        if version[1] < FREE_THREADED_SABI_SINCE:
            return PythonApi(requested, ignored_because=f"{running} has no stable ABI (abi3t comes with 3.15, PEP 803)")
        if minor < FREE_THREADED_SABI_SINCE:
            return PythonApi(requested, ignored_because=f"{running}'s stable ABI (abi3t) starts at 3.15, "
                                                        f"not 3.{minor}: ask for `cp315` or later")
        return PythonApi(requested, python_tag=requested, abi_tag="abi3t", sabi_version=f"3.{minor}")
    return PythonApi(requested, python_tag=requested, abi_tag="abi3", sabi_version=f"3.{minor}")


def for_this_interpreter(requested: str | None) -> PythonApi:
    return resolve(requested, implementation=sys.implementation.name, version=sys.version_info[:2],
                   free_threaded=bool(sysconfig.get_config_var("Py_GIL_DISABLED")))
