# BEFORE: a hand-written, PyTorch-style setup.py (shown in docs/migration/from-setup-py.md;
# never built). It drives CMake with subprocess calls, globs package_data and sets
# rpaths by hand. The comments mark what goes wrong; ../after is the same project on buildkit.
import glob
import multiprocessing
import os
import platform
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(ROOT, "build")
PACKAGE_DIR = os.path.join(ROOT, "fastvec")

# "on", "y" or "Debug" silently mean off; a typo is never reported.
DEBUG = os.getenv("DEBUG", "0") in ("1", "ON", "TRUE")
# Every core, whatever the memory: an OOM-killed compiler on small CI machines.
MAX_JOBS = os.getenv("MAX_JOBS") or str(multiprocessing.cpu_count())


def cmake_args():
    args = [
        f"-DCMAKE_BUILD_TYPE={'Debug' if DEBUG else 'Release'}",
        f"-DCMAKE_INSTALL_PREFIX={PACKAGE_DIR}",
        f"-DPython_EXECUTABLE={sys.executable}",
    ]
    # Forward USE_*/BUILD_* options... but a changed value never reaches CMake again (below).
    args += [f"-D{k}={v}" for k, v in os.environ.items() if k.startswith(("USE_", "BUILD_"))]
    return args


def build_cmake():
    os.makedirs(BUILD_DIR, exist_ok=True)
    # Configure once; later changes to options, compilers or CMakeLists.txt need `rm -rf build`.
    if not os.path.exists(os.path.join(BUILD_DIR, "CMakeCache.txt")):
        subprocess.check_call(["cmake", ROOT, "-G", "Ninja", *cmake_args()], cwd=BUILD_DIR)
    # The whole ninja output scrolls by; a failure ends in "CalledProcessError" and a traceback.
    subprocess.check_call(["cmake", "--build", ".", "--target", "install", "--", "-j", MAX_JOBS], cwd=BUILD_DIR)


class CMakeBuild(build_ext):
    def run(self):
        build_cmake()
        super().run()


def package_files():
    # Runs when setup.py is *read*, before anything is built: on a fresh checkout
    # `python setup.py bdist_wheel` ships a wheel without lib/ (run it twice...).
    files = []
    for pattern in ("lib/*.so*", "lib/*.dylib", "include/**/*.h"):
        files += [os.path.relpath(p, PACKAGE_DIR)
                  for p in glob.glob(os.path.join(PACKAGE_DIR, pattern), recursive=True)]
    return files


# The rpath by hand, per platform (and forgotten for the next platform).
RPATH = "-Wl,-rpath,@loader_path/lib" if platform.system() == "Darwin" else "-Wl,-rpath,$ORIGIN/lib"

with open(os.path.join(ROOT, "version.txt")) as f:
    VERSION = f.read().strip()

setup(
    name="fastvec",
    version=VERSION,
    packages=find_packages(include=["fastvec", "fastvec.*"]),
    ext_modules=[Extension("fastvec._C", sources=["csrc/stub.c"], libraries=["fastvec_python"],
                           library_dirs=[os.path.join(PACKAGE_DIR, "lib")], extra_link_args=[RPATH])],
    cmdclass={"build_ext": CMakeBuild},
    package_data={"fastvec": package_files()},
    zip_safe=False,
)
