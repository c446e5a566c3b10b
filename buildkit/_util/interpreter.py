"""Which interpreter builds: its ABI key, and the placeholders ``build-dir`` may use.

CMake's cache pins one ``Python_EXECUTABLE`` and every extension module a build makes is
for one ABI, so the default build folder is one per interpreter ABI:
``build/cpython-312-x86_64-linux-gnu``.  Switching between Python 3.11 and 3.12 in one
checkout then never mixes their outputs, and each keeps its incremental build.  Two
environments of the same Python share the folder (the same ABI, so the same outputs;
the driver configures again when the cache's interpreter is another one).  uv's
isolated builds, a fresh environment each time, thus keep building incrementally.

Lean (``os``, ``sys`` and the already-loaded import machinery): the no-op develop's
first stage finds its record through :func:`default_build_dir`.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES

# scikit-build-core's spelling (Python's format syntax); its {wheel_tag}, {build_type}
# and {state} are not offered: develop and wheel builds share one build folder.
DEFAULT_BUILD_DIR = os.path.join("build", "{soabi}")


def soabi() -> str:
    """The running interpreter's extension-module ABI, as its own module suffix names it:
    ``cpython-312-x86_64-linux-gnu``, ``cpython-313t-x86_64-linux-gnu``, ``cp312-win_amd64``,
    ``pypy310-pp73-x86_64-linux-gnu`` (sysconfig's ``SOABI``, without importing sysconfig).
    An interpreter whose first suffix names no ABI gives its cache tag (``cpython-312``)."""
    first = EXTENSION_SUFFIXES[0] if EXTENSION_SUFFIXES else ""
    key = first[1:].rpartition(".")[0]
    if not key or os.sep in key or (os.altsep and os.altsep in key):
        return sys.implementation.cache_tag or sys.implementation.name
    return key


def placeholders() -> dict[str, str]:
    """What ``build-dir``'s placeholders stand for under this interpreter."""
    return {"soabi": soabi(), "cache_tag": sys.implementation.cache_tag or sys.implementation.name}


def expand_build_dir(template: str) -> str:
    """``template`` with its placeholders filled in (``config.build_dir`` checks it first)."""
    return template.format_map(placeholders())


def default_build_dir(root: str) -> str:
    """The default build folder of the project at ``root`` under this interpreter."""
    return os.path.join(root, expand_build_dir(DEFAULT_BUILD_DIR))
