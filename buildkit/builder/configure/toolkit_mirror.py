"""What a mirrored CUDA toolkit from NVIDIA's wheels gains inside the mirror, never in the
wheels' own folders: what a link line needs that the wheels lack.

* ``lib/libX.so`` beside each ``lib/libX.so.N`` that has none: NVIDIA's wheels ship the
  loader's name alone, and a link line (``-lcudart``) or find_library needs the unversioned
  one.
* ``lib64``, a link to ``lib``, where the toolkit's ``bin/nvcc.profile`` names its libraries as
  a system installation has them, ``lib$(_TARGET_SIZE_)``: that of ``nvidia-cuda-nvcc`` 13.0
  and 13.1 does (13.2 on names ``lib``), and the wheels put them in ``lib``.  nvcc then links
  no program: CMake's first CUDA compile fails on ``cannot find -lcudart_static`` (measured
  with nvcc 13.0.88 and every part of its release), and so would a build for a torch that
  pins CUDA 13.0 or 13.1, whose toolchain wheels are pinned to that release.  nvcc finds its
  prefix beside the path it was started as, the mirror's.
"""

from __future__ import annotations

import os
import re

from buildkit._util import console
from buildkit._util.fileutil import point_symlink

# lib/libcudart.so.13 -> lib/libcudart.so: the name `-lcudart` and find_library look for.
_VERSIONED_LIBRARY = re.compile(r"^((?:.*/)?lib/lib[^/]+\.so)(?:\.\d+)+$")
_PROFILE = os.path.join("bin", "nvcc.profile")
_SIZED_LIBRARY_FOLDER = b"lib$(_TARGET_SIZE_)"
SIZED_ALIAS = "lib64"


def development_links(target: str, stats: dict[str, list[int]]) -> int:
    """The unversioned names in ``target``, a toolkit's mirror whose files are ``stats``
    (relative names, which gain them); how many links were written."""
    written = 0
    for relative in sorted(stats):
        match = _VERSIONED_LIBRARY.match(relative.replace(os.sep, "/"))
        if match and match[1] not in stats:
            written += point_symlink(os.path.join(target, match[1]), os.path.basename(relative))
            stats[match[1]] = []
    return written


def sized_library_folder(target: str, stats: dict[str, list[int]]) -> int:
    """``<prefix>/lib64`` -> ``lib`` for each toolkit prefix (``cu13``) of the mirror whose
    profile asks for it and that has no ``lib64`` of its own; taken away again once an nvcc
    that names ``lib`` replaces it.  Run once the files the toolkit no longer has are gone
    from the mirror (a ``lib64`` of its own before, emptied).  How many links changed."""
    written = 0
    for profile in sorted(relative for relative in stats if relative.endswith(os.sep + _PROFILE)):
        prefix = os.path.join(target, profile[:-len(_PROFILE) - 1])
        alias = os.path.join(prefix, SIZED_ALIAS)
        own = any(relative.startswith(os.path.relpath(alias, target) + os.sep) for relative in stats)
        try:
            with open(os.path.join(target, profile), "rb") as handle:
                wanted = _SIZED_LIBRARY_FOLDER in handle.read()
        except OSError:
            wanted = False
        if wanted and not own and os.path.isdir(os.path.join(prefix, "lib")):
            if point_symlink(alias, "lib"):
                console.info(f"the CUDA toolkit's nvcc.profile looks for its libraries in lib64 (as nvidia-cuda-nvcc "
                             f"13.0 and 13.1 do), which NVIDIA's wheels do not have: linked {alias} to lib in the "
                             "mirror")
                written += 1
        elif not own and os.path.islink(alias):
            os.unlink(alias)
            written += 1
    return written
