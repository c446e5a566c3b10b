"""buildkit's own wheel: what it ships, what its metadata says, and that an installed
(non-editable) buildkit finds its CMake modules and templates."""

from __future__ import annotations

import json
import tomllib
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from buildkit_testing.paths import REPO
from buildkit_testing.processes import run
from buildkit_testing.venvs import site_packages, venv_env

pytestmark = pytest.mark.slow

RUNTIME_DEPENDENCIES = {"setuptools", "wheel", "packaging", "rich"}
# A PEP 517 build asks for these only where the machine lacks them (test_public_api.py); they are never
# unconditional dependencies, which would install the cmake wheel into every isolated build environment.
BUILD_TOOLS = {"cmake", "ninja"}


@pytest.fixture(scope="module")
def buildkit_wheel(wheelhouse) -> Path:
    wheels = sorted(wheelhouse.glob("setuptools_buildkit-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _dist_info(names: list[str]) -> str:
    (info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
    return info


def test_wheel_ships_cmake_modules_and_templates(buildkit_wheel):
    with zipfile.ZipFile(buildkit_wheel) as wheel:
        names = wheel.namelist()
        for folder in ("cmake", "templates"):
            shipped = sorted(p.relative_to(REPO).as_posix() for p in (REPO / folder).rglob("*") if p.is_file())
            assert shipped, f"{folder}/ is empty in the checkout"
            for rel in shipped:
                # cmake/X ships as buildkit/cmake/X, byte for byte.
                assert f"buildkit/{rel}" in names, f"{rel} is missing from {buildkit_wheel.name}"
                assert wheel.read(f"buildkit/{rel}") == (REPO / rel).read_bytes()
    # Every module of the source tree: pyproject.toml lists the packages one by one.
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "buildkit").rglob("*.py")}
    assert modules - set(names) == set()
    for required in ("buildkit/cmake/BuildkitTopLevel.cmake", "buildkit/cmake/Buildkit.cmake",
                     "buildkit/templates/version.py.in", "buildkit/py.typed"):
        assert required in names
    # Nothing but the package and its dist-info: no tests, examples or top-level cmake/.
    assert {n.split("/")[0] for n in names} == {"buildkit", _dist_info(names)}


def test_wheel_metadata_names_the_distribution_its_dependencies_and_script(buildkit_wheel):
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    with zipfile.ZipFile(buildkit_wheel) as wheel:
        info = _dist_info(wheel.namelist())
        metadata = HeaderParser().parsestr(wheel.read(f"{info}/METADATA").decode())
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
        tag = HeaderParser().parsestr(wheel.read(f"{info}/WHEEL").decode())
    assert metadata["Name"] == "setuptools-buildkit"
    assert metadata["Version"] == project["version"]
    requirements = [Requirement(r) for r in metadata.get_all("Requires-Dist")]
    runtime = {r.name for r in requirements if r.marker is None}
    assert RUNTIME_DEPENDENCIES <= runtime and not BUILD_TOOLS & runtime, runtime
    # The test extra stays an extra.
    assert "pytest" not in runtime and any(r.name == "pytest" and r.marker for r in requirements)
    assert "[console_scripts]" in entry_points
    assert "buildkit = buildkit.frontends.cli.entry:main" in entry_points
    assert tag["Root-Is-Purelib"] == "true" and tag["Tag"] == "py3-none-any"


def test_installed_wheel_finds_its_resources(buildkit_venv, wheelhouse, tmp_path):
    probe = """
import json, buildkit, buildkit.package.version
from buildkit._util.resources import cmake_dir, templates_dir
print(json.dumps({
    "buildkit": buildkit.__file__,
    "cmake": str(cmake_dir()),
    "templates": str(templates_dir()),
    "files": sorted(p.name for d in (cmake_dir(), templates_dir()) for p in d.iterdir()),
    "template": buildkit.package.version._default_template(),
}))
"""
    env = venv_env(buildkit_venv, wheelhouse)
    found = json.loads(run([buildkit_venv, "-c", probe], cwd=tmp_path, env=env).stdout)
    package = Path(found["buildkit"]).parent
    # The installed copy, not the checkout.
    assert package == site_packages(buildkit_venv) / "buildkit"
    assert Path(found["cmake"]) == package / "cmake"
    assert Path(found["templates"]) == package / "templates"
    assert {"Buildkit.cmake", "BuildkitTopLevel.cmake", "version.py.in"} <= set(found["files"])
    assert found["template"] == (REPO / "templates" / "version.py.in").read_text()

    # The console script is installed and answers.
    assert "develop" in run([buildkit_venv.parent / "buildkit", "--help"], cwd=tmp_path, env=env).stdout
