"""bdist_wheel: bundled licenses, tags, reproducible bytes and no partial wheels."""

from __future__ import annotations

import hashlib
import os
import platform
import random
import resource
import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from setuptools import Extension
from setuptools.dist import Distribution

from buildkit.config.modes import WheelMode
from buildkit.config.options import BuildOptions
from buildkit.config.settings import load_settings
from buildkit.frontends.setuptools.commands.bdist_wheel import BdistWheel
from buildkit.package.licenses import dist_info_license_name
from buildkit.project import Project
from buildkit.project.parts import Configuration
from buildkit_testing.artifacts import only_wheel
from buildkit_testing.processes import clean_env, run, setup_py
from buildkit_testing.projects import write_files

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="checks linux tags and gcc flags")
needs_compiler = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                    reason="no C compiler")
PLAT = f"linux_{platform.machine()}"
CP = f"cp{sys.version_info[0]}{sys.version_info[1]}"
EPOCH = "1700000000"

SETUP_PY = """\
import os
from setuptools import Extension, setup
from buildkit.frontends.setuptools.commands.bdist_wheel import BdistWheel

native = os.environ.get("BUILD_LIBTORCH_WHL") != "1" and os.environ.get("DEMO_PURE") != "1"
setup(cmdclass={"bdist_wheel": BdistWheel},
      ext_modules=[Extension("demo._C", ["src/demo.c"])] if native else [])
"""
PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "demo"
version = "1.0"

[tool.setuptools]
packages = ["demo"]
package-data = { demo = ["lib/*.so", "data/*.bin"] }

[tool.buildkit]
licenses = ["third_party/foo/LICENSE"]
"""
DEMO_C = """\
#include <Python.h>
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&mod); }
"""
FILES = {
    "setup.py": SETUP_PY,
    "pyproject.toml": PYPROJECT,
    "LICENSE": "Demo license: do what you like.\n",
    "third_party/foo/LICENSE": "Foo license: keep this notice.\n",
    "src/demo.c": DEMO_C,
    "demo/__init__.py": "",
    "demo/lib/libdemo.so": "not really a library\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(tmp_path / "proj", FILES)


def build_wheel(root: Path, out: Path, *, preexec_fn=None, check: bool = True, **env: str):
    return setup_py(sys.executable, root, "-q", "bdist_wheel", "--dist-dir", out, env=clean_env(**env), check=check,
                    preexec_fn=preexec_fn)


def read(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(f"demo-1.0.dist-info/{name}").decode()


def prepare_metadata(root: Path, out: Path) -> tuple[Path, str]:
    """The PEP 517 metadata hook in a subprocess; returns the dist-info and stderr."""
    out.mkdir()
    code = "import sys; from setuptools import build_meta as b; b.prepare_metadata_for_build_wheel(sys.argv[1])"
    done = run([sys.executable, "-c", code, out], cwd=root, env={**os.environ, "DEMO_PURE": "1"})
    return out / "demo-1.0.dist-info", done.stderr


def assert_both_licenses(text: str) -> None:
    assert "Demo license" in text and "Foo license" in text
    assert text.index("Demo license") < text.index("third_party/foo/LICENSE") < text.index("Foo license")


@linux_only
@needs_compiler
def test_full_wheel_has_all_licenses_and_cpython_tag(project: Path, tmp_path: Path) -> None:
    build_wheel(project, tmp_path / "out")
    wheel = only_wheel(tmp_path / "out")
    assert wheel.name == f"demo-1.0-{CP}-{CP}-{PLAT}.whl"
    assert_both_licenses(read(wheel, "licenses/LICENSE"))
    assert "License-File: LICENSE" in read(wheel, "METADATA")
    assert f"Tag: {CP}-{CP}-{PLAT}" in read(wheel, "WHEEL")
    assert (project / "LICENSE").read_text() == FILES["LICENSE"]  # the source tree is untouched


@linux_only
def test_library_only_wheel_is_py3_none(project: Path, tmp_path: Path) -> None:
    build_wheel(project, tmp_path / "out", BUILD_LIBTORCH_WHL="1")
    wheel = only_wheel(tmp_path / "out")
    assert wheel.name == f"demo-1.0-py3-none-{PLAT}.whl"
    assert "Root-Is-Purelib: false" in read(wheel, "WHEEL") and f"Tag: py3-none-{PLAT}" in read(wheel, "WHEEL")
    with zipfile.ZipFile(wheel) as archive:
        assert "demo/lib/libdemo.so" in archive.namelist()


def test_prepared_metadata_has_the_same_licenses(project: Path, tmp_path: Path) -> None:
    # pip calls prepare_metadata_for_build_wheel first and hands its dist-info to build_wheel.
    dist_info, _ = prepare_metadata(project, tmp_path / "md")
    assert_both_licenses((dist_info / "licenses" / "LICENSE").read_text())


def test_project_without_license_gets_one_listed_in_metadata(project: Path, tmp_path: Path) -> None:
    (project / "LICENSE").unlink()
    dist_info, stderr = prepare_metadata(project, tmp_path / "md")
    assert "Foo license" in (dist_info / "licenses" / "LICENSE").read_text()
    assert "License-File: LICENSE" in (dist_info / "METADATA").read_text()
    assert "no license file of its own" in stderr


@linux_only
@needs_compiler
def test_wheels_are_reproducible_across_directories(tmp_path: Path) -> None:
    digests = set()
    for name in ("one", "two-with-a-longer-path"):
        root = write_files(tmp_path / name / "proj", FILES)
        # Absolute source paths would leak into the debug info of the extension.
        build_wheel(root, tmp_path / name / "out", SOURCE_DATE_EPOCH=EPOCH, CFLAGS=f"-ffile-prefix-map={root}=.")
        wheel = only_wheel(tmp_path / name / "out")
        digests.add(hashlib.sha256(wheel.read_bytes()).hexdigest())
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            assert {info.date_time for info in archive.infolist()} == {(2023, 11, 14, 22, 13, 20)}
        assert names[-1].endswith("RECORD")
    assert len(digests) == 1


def test_interrupted_write_leaves_no_partial_wheel(project: Path, tmp_path: Path) -> None:
    # Two incompressible 200 KB files: every file fits under the limit, the wheel holding both doesn't.
    rng = random.Random(0)
    for name in ("a.bin", "b.bin"):
        (project / "demo" / "data").mkdir(exist_ok=True)
        (project / "demo" / "data" / name).write_bytes(rng.randbytes(200_000))
    limit = 300_000

    def cap_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "out"
    failed = build_wheel(project, out, preexec_fn=cap_file_size, check=False, DEMO_PURE="1")
    assert failed.returncode != 0
    assert "File too large" in failed.stderr or "Errno 27" in failed.stderr, failed.stderr[-2000:]
    assert list(out.iterdir()) == []  # neither a partial .whl nor the staging folder
    build_wheel(project, out, DEMO_PURE="1")  # and without the limit it works
    assert only_wheel(out).stat().st_size > limit


# --------------------------------------------------------------- in-process tags

def command_for(root: Path, options: BuildOptions, *, native: bool) -> BdistWheel:
    settings = load_settings(root)
    dist = Distribution({"name": "demo", "version": "1.0", "packages": ["demo"],
                         "ext_modules": [Extension("demo._C", ["src/demo.c"])] if native else []})
    dist.buildkit = Project.of(Configuration(settings, options))
    command = BdistWheel(dist)
    command.ensure_finalized()
    return command


@linux_only
def test_cross_build_platform_comes_from_the_options(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    monkeypatch.delenv("_PYTHON_HOST_PLATFORM", raising=False)
    full = command_for(project, BuildOptions(host_platform="linux-armv7l"), native=True)
    assert full.get_tag() == (CP, CP, "linux_armv7l")
    library = command_for(project, BuildOptions(library_only=True, host_platform="linux-aarch64"), native=False)
    assert library.get_tag() == ("py3", "none", "linux_aarch64") and library.root_is_pure is False
    assert command_for(project, BuildOptions(), native=True).get_tag() == (CP, CP, PLAT)
    assert BuildOptions(library_only=True).wheel_mode is WheelMode.LIBRARY_ONLY


def test_dist_info_license_name_matches_setuptools() -> None:
    assert dist_info_license_name("LICENSE") == "LICENSE"
    assert dist_info_license_name("legal/LICENSE.txt") == "legal/LICENSE.txt"
    assert dist_info_license_name("../LICENSE") == "LICENSE"

