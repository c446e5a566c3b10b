"""Developer build of tensorlet in place, without buildkit:

    python tools/dev_build.py [--build-dir /tmp/tensorlet-build] [-j 2] [-D USE_CUDA=ON ...]

configure (Ninja) -> build -> install into tensorlet/ -> compile the _C stub
(csrc/stub.c) next to it with an $ORIGIN/lib rpath, which is what buildkit's
build_ext does for a real wheel build.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tensorlet"


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def compile_stub(package_dir: Path = PACKAGE) -> Path:
    """Builds tensorlet/_C<EXT_SUFFIX> from csrc/stub.c against lib/libtensorlet_python.so."""
    out = package_dir / ("_C" + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = os.environ.get("CC", "gcc")
    run([cc, "-shared", "-fPIC", "-O2", str(ROOT / "csrc" / "stub.c"), "-I", sysconfig.get_paths()["include"],
         "-L", str(package_dir / "lib"), "-ltensorlet_python", "-Wl,-rpath,$ORIGIN/lib", "-o", str(out)])
    return out


def configure_args(build_dir: Path, defines: list[str], prefix: Path = PACKAGE) -> list[str]:
    args = [_tool("cmake"), "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}", f"-DCMAKE_INSTALL_PREFIX={prefix}",
            f"-DPython_EXECUTABLE={sys.executable}"]
    return args + [f"-D{d}" for d in defines]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", type=Path, default=Path(os.environ.get("TENSORLET_BUILD_DIR", "/tmp/tensorlet-build")))
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("-D", dest="defines", action="append", default=[], help="extra CMake -D definitions")
    p.add_argument("--no-stub", action="store_true")
    a = p.parse_args(argv)
    start = time.time()
    if not (a.build_dir / "build.ninja").exists() or a.defines:
        run(configure_args(a.build_dir, a.defines))
    run([_tool("cmake"), "--build", str(a.build_dir), "-j", str(a.jobs)])
    run([_tool("cmake"), "--install", str(a.build_dir)], stdout=subprocess.DEVNULL)
    if not a.no_stub:
        compile_stub()
    print(f"dev_build: done in {time.time() - start:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
