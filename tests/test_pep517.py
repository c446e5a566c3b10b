"""The PEP 517 / PEP 660 paths, with real pip and real builds of tests/packages/minimal.

Every front end here installs only from the local wheelhouse (``setuptools-buildkit``
is not on the index, and ``buildkit`` there is someone else's project): pip gets
``PIP_NO_INDEX`` and ``PIP_FIND_LINKS`` in its environment, which its isolated
build-environment installer honours too.  Two venvs are made for the whole session:
``buildkit_venv`` (buildkit installed from its wheel, for --no-build-isolation builds)
and ``bare_venv`` (nothing but pip: what a user has before ``pip install <sdist>``).
Each test removes what it installs into them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

from buildkit_testing.git import commit_all, git
from buildkit_testing.paths import build_folder
from buildkit_testing.processes import run
from buildkit_testing.venvs import make_venv, site_packages, venv_env

pytestmark = pytest.mark.slow

PROBE = ("import json, minimal; print(json.dumps({'sum': minimal.sum([1, 2, 3]), 'file': minimal.__file__, "
         "'flavour': minimal.build_flavour(), 'version': minimal.__version__}))")


@pytest.fixture(scope="session")
def neutral_cwd(tmp_path_factory) -> Path:
    """An empty folder to import from: the project folder on sys.path would hide a broken install."""
    return tmp_path_factory.mktemp("neutral")


@pytest.fixture(scope="session")
def bare_venv(tmp_path_factory) -> Path:
    return make_venv(tmp_path_factory.mktemp("bare-venv") / "venv")


def pip(python: Path, wheelhouse: Path, *args, cwd=None, check=True, **env):
    return run([python, "-m", "pip", *args], cwd=cwd, env=venv_env(python, wheelhouse, **env), check=check)


def probe(python: Path, wheelhouse: Path, cwd: Path) -> dict:
    return json.loads(run([python, "-c", PROBE], cwd=cwd, env=venv_env(python, wheelhouse)).stdout)


def assert_not_installed(python: Path, wheelhouse: Path, cwd: Path) -> None:
    """No importable minimal, no dist-info, no editable hook, no console script."""
    result = run([python, "-c", "import minimal"], cwd=cwd, env=venv_env(python, wheelhouse), check=False)
    assert result.returncode != 0 and "No module named 'minimal'" in result.stderr
    site = site_packages(python)
    leftovers = [p.name for p in site.iterdir() if "minimal" in p.name.lower()]
    assert leftovers == []
    assert not (python.parent / "minimal-info").exists()


def cmake_make_program(project: Path) -> str:
    for line in (build_folder(project) / "CMakeCache.txt").read_text().splitlines():
        if line.startswith("CMAKE_MAKE_PROGRAM:"):
            return line.partition("=")[2]
    raise AssertionError("CMAKE_MAKE_PROGRAM is not in CMakeCache.txt")


def output(result: subprocess.CompletedProcess) -> str:
    return result.stdout + result.stderr


def configure_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line.strip() for line in output(result).splitlines() if "buildkit: configuring" in line]


def unpack_and_probe(wheel: Path, target: Path, cwd: Path) -> dict:
    """Import minimal from an unpacked wheel with this interpreter (the one that built it)."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    code = f"import sys; sys.path.insert(0, {str(target)!r}); " + PROBE
    found = json.loads(run([sys.executable, "-c", code], cwd=cwd).stdout)
    assert Path(found["file"]).is_relative_to(target)
    return found


# ---------------------------------------------------------------- editable installs

def test_editable_without_build_isolation_reuses_the_build_dir(buildkit_venv, wheelhouse, neutral_cwd, test_package):
    project = test_package("minimal")
    install = ("install", "-v", "--no-build-isolation", "-e", ".")
    first = pip(buildkit_venv, wheelhouse, *install, cwd=project)
    assert configure_lines(first) and "no CMakeCache.txt" in configure_lines(first)[0]
    found = probe(buildkit_venv, wheelhouse, neutral_cwd)
    assert found["sum"] == 6.0 and found["flavour"] == "fast-sum" and found["version"] == "0.1.0"
    assert Path(found["file"]) == project / "minimal" / "__init__.py"
    # Built with the venv's own tools, which stay.
    assert Path(cmake_make_program(project)).is_relative_to(buildkit_venv.parent.parent)

    record = build_folder(project) / ".buildkit" / "configure.json"
    library = build_folder(project) / "libminimal.so"
    stamps = record.stat().st_mtime_ns, library.stat().st_mtime_ns
    second = pip(buildkit_venv, wheelhouse, *install, cwd=project)
    assert configure_lines(second) == [], output(second)
    assert "buildkit: up to date" in output(second)
    assert (record.stat().st_mtime_ns, library.stat().st_mtime_ns) == stamps
    assert probe(buildkit_venv, wheelhouse, neutral_cwd)["sum"] == 6.0

    pip(buildkit_venv, wheelhouse, "uninstall", "-y", "minimal")
    assert_not_installed(buildkit_venv, wheelhouse, neutral_cwd)


def test_isolated_editable_twice_then_setup_py_develop(buildkit_venv, wheelhouse, neutral_cwd, test_package):
    """PyTorch's failure mode: the kept CMake cache names a ninja from pip's deleted
    build environment ("build tool execution failed ... /tmp/pip-build-env-*/overlay/bin/ninja").
    As PyTorch's pyproject.toml does, the project requires cmake and ninja to build, so each
    isolated build environment has its own, found first on its PATH."""
    project = test_package("minimal")
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('requires = ["setuptools-buildkit"]',
                                                       'requires = ["setuptools-buildkit", "cmake", "ninja"]', 1))
    pip(buildkit_venv, wheelhouse, "install", "-v", "-e", ".", cwd=project)
    recorded = cmake_make_program(project)
    assert "pip-build-env-" in recorded and not os.path.exists(recorded), recorded
    assert probe(buildkit_venv, wheelhouse, neutral_cwd)["sum"] == 6.0
    library = build_folder(project) / "libminimal.so"
    built = library.stat().st_mtime_ns

    second = pip(buildkit_venv, wheelhouse, "install", "-v", "-e", ".", cwd=project)
    (reason,) = configure_lines(second)
    assert f"the build program CMake recorded, {recorded}, no longer exists" in reason
    assert cmake_make_program(project) != recorded
    # Reconfigured against the new tools, but nothing needed compiling again.
    assert library.stat().st_mtime_ns == built
    found = probe(buildkit_venv, wheelhouse, neutral_cwd)
    assert found["sum"] == 6.0 and Path(found["file"]) == project / "minimal" / "__init__.py"

    # `python setup.py develop` in the same project, in the venv, after the isolated build.
    recorded = cmake_make_program(project)
    develop = run([buildkit_venv, "setup.py", "develop"], cwd=project, env=venv_env(buildkit_venv, wheelhouse))
    (reason,) = configure_lines(develop)
    assert f"{recorded}, no longer exists" in reason
    assert Path(cmake_make_program(project)).is_relative_to(buildkit_venv.parent.parent)
    assert "registered editable install of minimal" in output(develop)
    found = probe(buildkit_venv, wheelhouse, neutral_cwd)
    assert found["sum"] == 6.0 and Path(found["file"]) == project / "minimal" / "__init__.py"
    info = run([buildkit_venv.parent / "minimal-info"], cwd=neutral_cwd, env=venv_env(buildkit_venv, wheelhouse))
    assert "minimal 0.1.0" in info.stdout
    installer = next(site_packages(buildkit_venv).glob("minimal-*.dist-info")) / "INSTALLER"
    assert installer.read_text().strip() == "buildkit"

    # pip removes what buildkit registered in-process.
    pip(buildkit_venv, wheelhouse, "uninstall", "-y", "minimal")
    assert_not_installed(buildkit_venv, wheelhouse, neutral_cwd)


# ------------------------------------------------------------ regular installs, dists

def test_pip_install_build_and_sdist_in_a_fresh_venv(bare_venv, wheelhouse, neutral_cwd, tmp_path, test_package):
    project = test_package("minimal")
    commit_all(project)  # a git checkout: the version carries the commit (0.1.0+git<sha7>)
    version = f"0.1.0+git{git(project, 'rev-parse', '--short=7', 'HEAD')}"

    # `pip install .` with build isolation, into a venv that has nothing but pip.
    pip(bare_venv, wheelhouse, "install", ".", cwd=project)
    found = probe(bare_venv, wheelhouse, neutral_cwd)
    assert found["sum"] == 6.0 and found["version"] == version
    assert Path(found["file"]).is_relative_to(site_packages(bare_venv))
    pip(bare_venv, wheelhouse, "uninstall", "-y", "minimal")
    assert_not_installed(bare_venv, wheelhouse, neutral_cwd)

    # python -m build, wheel then sdist (no isolation: the isolated path is pip's, above).
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "build", "--no-isolation", "--outdir", dist]
    run([*build, "--wheel", project], env=venv_env(Path(sys.executable), wheelhouse))
    (wheel,) = dist.glob("*.whl")
    assert wheel.name.startswith(f"minimal-{version}-cp")
    names = zipfile.ZipFile(wheel).namelist()
    assert "minimal/lib/libminimal.so" in names and any(n.startswith("minimal/_C.") for n in names)
    assert unpack_and_probe(wheel, tmp_path / "unpacked", neutral_cwd)["version"] == version

    # Both wheel builds staged under build/: the source tree is as it was checked out.
    assert git(project, "status", "--porcelain", "--ignored").splitlines() == ["?? build/"]

    # An in-place build leaves outputs in the project: the sdist must hold none of them.
    run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=project,
        env=venv_env(Path(sys.executable), wheelhouse))
    assert (project / "minimal" / "lib" / "libminimal.so").is_file()
    made = run([*build, "--sdist", project], env=venv_env(Path(sys.executable), wheelhouse))
    (sdist,) = dist.glob("*.tar.gz")
    # An sdist is a release artifact: the checkout's +git label is dropped, and said so.
    assert f"sdist version 0.1.0: without the +{version.split('+')[1]} label" in made.stdout + made.stderr
    version = "0.1.0"
    top = f"minimal-{version}"
    assert sdist.name == f"{top}.tar.gz"
    with tarfile.open(sdist) as archive:
        members = {m.name.removeprefix(f"{top}/") for m in archive.getmembers() if m.isfile()}
        pkg_info = HeaderParser().parsestr(archive.extractfile(f"{top}/PKG-INFO").read().decode())
    for source in ("CMakeLists.txt", "cmake/MinimalConfig.cmake.in", "csrc/minimal.cpp", "csrc/python_bindings.cpp",
                   "csrc/stub.c", "include/minimal/minimal.h", "include/extras/extras.h", "minimal/__init__.py",
                   "minimal/info.py", "pyproject.toml", "setup.py", "version.txt", "README.md", "LICENSE",
                   "third_party/fastsum/LICENSE", "PKG-INFO"):
        assert source in members, f"{source} is missing from the sdist"
    outputs = [m for m in members if m.startswith(("build/", "minimal/lib/", "minimal/include/", "minimal/share/"))
               or m.endswith((".so", ".o")) or m in ("minimal/version.py", "compile_commands.json")]
    assert outputs == []
    assert pkg_info["Version"] == version

    # The sdist builds from scratch in a fresh venv (no git there: the version comes from PKG-INFO).
    install = pip(bare_venv, wheelhouse, "install", "-v", sdist, cwd=neutral_cwd)
    (reason,) = configure_lines(install)
    assert "no CMakeCache.txt" in reason
    found = probe(bare_venv, wheelhouse, neutral_cwd)
    assert found["sum"] == 6.0 and found["version"] == version
    metadata = run([bare_venv, "-c", "from importlib.metadata import version; print(version('minimal'))"],
                   cwd=neutral_cwd).stdout.strip()
    assert metadata == version
    pip(bare_venv, wheelhouse, "uninstall", "-y", "minimal")
    assert_not_installed(bare_venv, wheelhouse, neutral_cwd)


# ------------------------------------------------------------ option layer precedence

def test_config_setting_beats_environment_with_pip(buildkit_venv, wheelhouse, neutral_cwd, test_package):
    project = test_package("minimal")
    pip(buildkit_venv, wheelhouse, "install", "--no-build-isolation", ".", "--config-settings", "USE_FAST_SUM=OFF",
        cwd=project, USE_FAST_SUM="ON")
    found = probe(buildkit_venv, wheelhouse, neutral_cwd)
    assert found["flavour"] == "plain" and found["sum"] == 6.0
    assert Path(found["file"]).is_relative_to(site_packages(buildkit_venv))
    pip(buildkit_venv, wheelhouse, "uninstall", "-y", "minimal")
    assert_not_installed(buildkit_venv, wheelhouse, neutral_cwd)


def test_option_layers_with_python_m_build(wheelhouse, neutral_cwd, tmp_path, test_package):
    """config setting > environment > [tool.buildkit] cmake-defines > CMakeLists' default,
    with `python -m build --wheel --no-isolation`: one kept build folder, reconfigured
    each time the resolved value changes."""
    project = test_package("minimal")
    python = Path(sys.executable)

    def flavour(name: str, *config: str, **env: str) -> str:
        out = tmp_path / name
        args = [a for c in config for a in ("-C", c)]
        run([python, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, *args, project],
            env=venv_env(python, wheelhouse, **env))
        (wheel,) = out.glob("*.whl")
        return unpack_and_probe(wheel, out / "unpacked", neutral_cwd)["flavour"]

    assert flavour("config-over-env", "USE_FAST_SUM=OFF", USE_FAST_SUM="ON") == "plain"
    assert flavour("env-on", USE_FAST_SUM="ON") == "fast-sum"
    assert flavour("env-off", USE_FAST_SUM="OFF") == "plain"

    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        'package = "minimal"\n', 'package = "minimal"\ncmake-defines = { USE_FAST_SUM = "OFF" }\n', 1))
    assert 'cmake-defines = { USE_FAST_SUM = "OFF" }' in pyproject.read_text()
    assert flavour("env-over-toml", USE_FAST_SUM="ON") == "fast-sum"  # environment over toml
    assert flavour("toml") == "plain"  # toml alone
    assert flavour("config-over-toml", "USE_FAST_SUM=ON") == "fast-sum"
