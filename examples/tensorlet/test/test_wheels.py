"""tensorlet's three wheels -- full, library-only (libtensorlet) and python-only --
built from ONE build folder, installed into fresh venvs; and the CI configuration
that builds them (ci/wheels.yml, [tool.cibuildwheel]).

The split wheels come from `buildkit wheels` run on the session's `full_build`
folder, as ci/wheels.yml runs it: `--kind library`, then `--kind python` against
that library wheel, each built in a fresh venv from the run's wheelhouse, repaired
with auditwheel, audited and smoke-tested. Switching the mode never recompiles
libtensorlet (its object files are checked); python-only compiles only the
bindings against the installed libtensorlet, and the switch back to full compiles
them once more. So tensorlet is still compiled only twice per test run (the
in-place CPU build and `full_build`)."""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from buildkit.package.version import resolve_version
from buildkit_testing.processes import run
from conftest import ROOT, compiled_since, have_tool, ninja_entries, tool

REPO = ROOT.parents[1]
CI = ROOT / "ci"
# version.txt plus the git label: the full_build copy sits at this checkout's commit.
VERSION = resolve_version(ROOT).version
PROBE = """
import json, tensorlet as tl, tensorlet.utils
x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * x).sum()
y.backward()
print(json.dumps({"source": tl._libraries.source, "version": tl.__version__, "y": y.item(), "grad": x.grad.tolist(),
                  "prefix": tensorlet.utils.cmake_prefix_path}))
"""
# Object files of the C++ libraries a mode switch must leave alone.
CORE_TARGETS = ("tensorlet.dir", "tensorlet_cuda.dir", "tensorlet_profiler.dir")
BINDING_TARGETS = ("tensorlet_python.dir", "_functional_C.dir")


# ---- the CI configuration (fast) ------------------------------------------------------
def _buildkit_wheels_calls(text: str) -> list[list[str]]:
    """The argument lists of every `python -m buildkit wheels ...` in a shell script."""
    calls = []
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        for i in range(len(words) - 2):
            if words[i:i + 3] == ["-m", "buildkit", "wheels"]:
                calls.append(words[i + 3:])
    return calls


def test_ci_workflow_and_cibuildwheel_run_real_commands():
    import yaml

    from buildkit.frontends.cli.main import DELEGATED
    from buildkit.frontends.cli.wheels import KINDS, build_parser

    assert DELEGATED["wheels"][0] == "buildkit.frontends.cli.wheels"  # `python -m buildkit wheels` is that parser
    workflow = yaml.safe_load((CI / "wheels.yml").read_text())
    jobs = workflow["jobs"]
    assert {"library", "python"} <= set(jobs)
    matrix = jobs["python"]["strategy"]["matrix"]["python"]
    assert [str(v) for v in matrix] == ["3.11", "3.12", "3.13"]
    assert "library" in jobs["python"]["needs"]
    kinds: dict[str, list] = {}
    for name, job in jobs.items():
        for step in job["steps"]:
            script = step.get("run", "")
            for version in matrix if "${{ matrix.python }}" in script else [None]:
                for argv in _buildkit_wheels_calls(script.replace("${{ matrix.python }}", str(version))):
                    try:
                        parsed = build_parser().parse_args(argv)
                    except SystemExit:
                        pytest.fail(f"job {name}: `buildkit wheels {' '.join(argv)}` does not parse")
                    assert parsed.kind in KINDS
                    assert (REPO / parsed.path / "pyproject.toml").is_file(), parsed.path
                    assert (REPO / parsed.path).resolve() == ROOT
                    kinds.setdefault(name, []).append(parsed)
    assert [p.kind for p in kinds["library"]] == ["library"]
    python_calls = kinds["python"]
    assert {p.kind for p in python_calls} == {"python"}
    assert sorted(p.python[0] for p in python_calls) == [f"python{v}" for v in matrix]
    # The python job finds the library wheel where the library job's artifact lands.
    library_out = kinds["library"][0].out
    assert all(p.out == library_out or p.wheelhouse == library_out for p in python_calls)
    # Every file a step names exists in the repository.
    for job in jobs.values():
        for step in job["steps"]:
            for path in step.get("with", {}).get("path", "").split():
                if path.startswith(("examples/", "docs/")):
                    assert (REPO / path).exists(), path

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    assert config["build"].split() == ["cp311-*", "cp312-*", "cp313-*"]
    assert config["environment"]["BUILD_PYTHON_ONLY"] == "1"
    before_build = " ".join(config["before-build"]) if isinstance(config["before-build"], list) \
        else config["before-build"]
    assert "pyyaml" in before_build and "libtensorlet" in before_build
    assert "{project}" in before_build  # buildkit itself, from this repository
    assert "import tensorlet" in config["test-command"]
    assert "libtensorlet" in config["before-test"]
    # The python-only wheel must not vendor libtensorlet's libraries.
    assert "--exclude libtensorlet.so" in config["repair-wheel-command"]
    assert (REPO / "pyproject.toml").is_file()  # {project}: the repository, cibuildwheel's project folder


# ---- the three wheels from one build folder (slow) ----------------------------------------
def _core_objects(build_dir: Path) -> dict[str, int]:
    found = {}
    for target in CORE_TARGETS:
        for obj in (build_dir / "CMakeFiles" / target).rglob("*.o"):
            found[str(obj.relative_to(build_dir))] = obj.stat().st_mtime_ns
    return found


class Step:
    """One build in the full_build folder: what it compiled, and whether the core changed."""

    def __init__(self, full_build, label: str, command: list) -> None:
        build_dir = full_build.build_dir
        before, objects = ninja_entries(build_dir), _core_objects(build_dir)
        # No time limit: the python-only step compiles bindings, slowly on a 2-core machine.
        self.result = run(command, cwd=full_build.root, env=full_build.env, timeout=None)
        self.output = self.result.stdout + self.result.stderr
        self.label = label
        self.compiled = compiled_since(before, build_dir)
        self.core_unchanged = objects == _core_objects(build_dir) and bool(objects)



@pytest.fixture(scope="module")
def wheels(full_build, tensorlet_wheelhouse, tmp_path_factory):
    """The full wheel, and the library and python wheels of `buildkit wheels`, from the
    full_build folder, which ends back in full mode (the other tests of the session use it)."""
    out = tmp_path_factory.mktemp("tensorlet-wheels")
    full = full_build.wheel()
    cli = [full_build.python, "-m", "buildkit", "wheels", full_build.root, "--out", out / "wheelhouse",
           "--wheelhouse", tensorlet_wheelhouse, "--allow-local-version"]  # a git checkout: 0.x+git<sha>

    # The same three through PEP 517 (`python -m build --wheel`), the mode as a config setting.
    def pep517(mode: str, *settings: str) -> list:
        return [full_build.python, "-m", "build", "--wheel", "--no-isolation", "--outdir", out / "pep517" / mode,
                *settings]

    steps = {}
    try:
        steps["library"] = Step(full_build, "library-only", [*cli, "--kind", "library", "--report",
                                                              out / "library.json"])
        (library,) = (out / "wheelhouse").glob("libtensorlet-*.whl")
        steps["python"] = Step(full_build, "python-only", [*cli, "--kind", "python", "--report", out / "python.json"])
        (python_wheel,) = (out / "wheelhouse").glob("tensorlet-*.whl")
        steps["pep517 library"] = Step(full_build, "library-only (PEP 517)",
                                       pep517("library", "-C", "BUILD_LIBTORCH_WHL=1"))
        # --no-isolation: the python-only build finds libtensorlet installed in the overlay venv.
        run([full_build.python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", library], env=full_build.env)
        steps["pep517 python"] = Step(full_build, "python-only (PEP 517)",
                                      pep517("python", "-C", "BUILD_PYTHON_ONLY=1"))
        steps["pep517 full"] = Step(full_build, "full (PEP 517)", pep517("full"))
    finally:
        subprocess.run([str(full_build.python), "-m", "pip", "uninstall", "-q", "-y", "libtensorlet"],
                       env=full_build.env, capture_output=True)
        steps["restore"] = Step(full_build, "full again", [full_build.python, "-m", "buildkit", "develop",
                                                           full_build.root])
    pep517_wheels = {mode: next((out / "pep517" / mode).glob("*.whl")) for mode in ("library", "python", "full")}
    return {"full": full, "library": library, "python": python_wheel, "steps": steps, "out": out,
            "full_build": full_build, "house": tensorlet_wheelhouse, "pep517": pep517_wheels}


def _names(wheel: Path) -> list[str]:
    """The files of a wheel (auditwheel's repair adds entries for folders too)."""
    return [n for n in zipfile.ZipFile(wheel).namelist() if not n.endswith("/")]


@pytest.mark.slow
def test_mode_switches_never_recompile_the_core(wheels):
    steps = wheels["steps"]
    for step in steps.values():
        assert step.core_unchanged, f"{step.label}: libtensorlet's object files changed"
        assert all(any(f"/{t}/" in f"/{o}" for t in BINDING_TARGETS) for o in step.compiled), \
            f"{step.label} compiled more than the bindings: {step.compiled}"
    for step in steps.values():  # shown with -rP: what each mode switch compiled
        print(f"{step.label}: compiled {[Path(o).name for o in step.compiled]}")
    assert steps["library"].compiled == [] and steps["pep517 library"].compiled == []
    compiled = {Path(o).name for o in steps["python"].compiled}
    assert {"Module.cpp.o", "python_functions.cpp.o"} <= compiled, steps["python"].compiled


@pytest.mark.slow
def test_buildkit_wheels_repaired_audited_and_smoke_tested_each_wheel(wheels):
    for label in ("library", "python"):
        out = wheels["steps"][label].output
        assert "buildkit wheels" in out and "1 wheel(s) ready" in out, out[-3000:]
        assert "auditwheel repair --plat manylinux_" in out
        (entry,) = json.loads((wheels["out"] / f"{label}.json").read_text())
        assert entry["ok"] and entry["audited"] and entry["smoke"] == "ok", entry
        assert entry["policy"].startswith("manylinux_") and Path(entry["wheel"]) == wheels[label]
    # The python-only repair excluded every library libtensorlet ships: nothing vendored twice.
    python_out = wheels["steps"]["python"].output
    for soname in ("libtensorlet.so", "libtensorlet_cuda.so", "libtensorlet_profiler.so"):
        if f"libtensorlet/lib/{soname}" in _names(wheels["library"]):
            assert f"--exclude={soname}" in python_out
    assert not any(".libs/" in n for n in _names(wheels["python"]))


@pytest.mark.slow
def test_pep517_builds_the_same_three_wheels(wheels):
    """`python -m build --wheel` with -C BUILD_LIBTORCH_WHL=1 / BUILD_PYTHON_ONLY=1 / nothing
    gives the wheels `setup.py bdist_wheel` gives (what auditwheel adds aside)."""
    by_kind = wheels["pep517"]

    def files(wheel: Path) -> set[str]:
        return {n for n in _names(wheel) if ".libs/" not in n and ".dist-info/" not in n}

    for kind in ("library", "python", "full"):
        assert files(by_kind[kind]) == files(wheels[kind]), kind
    assert by_kind["library"].name.endswith("-py3-none-linux_x86_64.whl".replace("x86_64", platform.machine()))
    metadata = zipfile.ZipFile(by_kind["python"]).read(f"tensorlet-{VERSION}.dist-info/METADATA").decode()
    assert f"Requires-Dist: libtensorlet=={VERSION}" in metadata


@pytest.mark.slow
def test_library_wheel_holds_only_the_cpp_side(wheels):
    wheel = wheels["library"]
    # Repaired by `buildkit wheels`: a manylinux tag, and the libraries it needs vendored.
    tag = rf"py3-none-manylinux_2_\d+_{platform.machine()}"
    assert re.match(rf"libtensorlet-{re.escape(VERSION)}-{tag}\.whl$", wheel.name), wheel.name
    names = _names(wheel)
    for needed in ("libtensorlet/__init__.py", "libtensorlet/lib/libtensorlet.so",
                   "libtensorlet/include/tensorlet/tensorlet.h",
                   "libtensorlet/include/tensorlet/generated/Functions.h",
                   "libtensorlet/share/cmake/Tensorlet/TensorletConfig.cmake",
                   "libtensorlet/share/cmake/Tensorlet/TensorletTargets.cmake"):
        assert needed in names, needed
    assert not any(n.startswith("tensorlet/") for n in names)
    assert not any("_python" in n or "/_C." in n or "_functional_C" in n or "_codegen" in n for n in names), names
    # The discovery modules (`python -m libtensorlet --cmake-prefix-path`) and entry point, no console script.
    assert [n for n in names if n.endswith(".py")] == ["libtensorlet/__init__.py", "libtensorlet/__main__.py"]
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert entry_points.split() == ["[cmake.prefix]", "libtensorlet", "=", "libtensorlet"]


@pytest.mark.slow
def test_python_wheel_holds_only_the_bindings_and_pins_the_library(wheels):
    wheel = wheels["python"]
    assert wheel.name.startswith(f"tensorlet-{VERSION}-cp3"), wheel.name
    names = _names(wheel)
    assert "tensorlet/lib/libtensorlet_python.so" in names and any(n.startswith("tensorlet/_C.") for n in names)
    assert any(n.startswith("tensorlet/functional/_functional_C") for n in names)
    assert not any(n.startswith(("tensorlet/include/", "tensorlet/share/")) for n in names), names
    assert [n for n in names if n.startswith("tensorlet/lib/")] == ["tensorlet/lib/libtensorlet_python.so"]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert f"Requires-Dist: libtensorlet=={VERSION}" in metadata
    # No file in both: the same path below the two top-level folders, or the same library.
    own = {n.split("/", 1)[1] for n in names if n.startswith("tensorlet/")} - {"__init__.py"}
    library = {n.split("/", 1)[1] for n in _names(wheels["library"]) if n.startswith("libtensorlet/")}
    assert not own & library, own & library
    # The full wheel has both halves.
    full = _names(wheels["full"])
    assert "tensorlet/lib/libtensorlet.so" in full and "tensorlet/lib/libtensorlet_python.so" in full
    assert not any(n.startswith("libtensorlet/") for n in full)


def _wheelhouse(out: Path, run_house: Path, name: str, *wheels: Path) -> Path:
    """A folder for pip --find-links: the given wheels plus numpy and, for a CUDA build, NVIDIA's
    runtime wheel from the run's wheelhouse."""
    house = out / name
    house.mkdir(exist_ok=True)
    for wheel in [*wheels, *run_house.glob("numpy-*.whl"), *run_house.glob("nvidia_cuda_runtime-*.whl")]:
        shutil.copy2(wheel, house)
    return house


def _pip(python: Path, *args, check=True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV", "PYTHONPATH"))}
    result = subprocess.run([str(python), "-m", "pip", *map(str, args), "--disable-pip-version-check"],
                            capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"pip {args} failed:\n{result.stdout}\n{result.stderr}")
    return result


def _probe(python: Path, cwd: Path, check=True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, cwd=cwd,
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    if check and result.returncode != 0:
        raise AssertionError(f"import failed:\n{result.stderr}")
    return result


def _consumer(prefix: str, build: Path) -> str:
    gen = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}"] if have_tool("ninja") else []
    run([tool("cmake"), "-S", ROOT / "test" / "cpp_consumer", "-B", build, *gen, f"-DCMAKE_PREFIX_PATH={prefix}"])
    run([tool("cmake"), "--build", build])
    return run([build / "consumer"]).stdout


def _mismatched_library(library: Path, version: str, out: Path) -> Path:
    """libtensorlet's wheel relabelled as another version (`wheel unpack` / `wheel pack`)."""
    work = out / "relabel"
    run([sys.executable, "-m", "wheel", "unpack", "-d", work, library])
    (unpacked,) = work.iterdir()
    (info,) = unpacked.glob("*.dist-info")
    metadata = info / "METADATA"
    metadata.write_text(metadata.read_text().replace(f"Version: {VERSION}\n", f"Version: {version}\n"))
    info.rename(info.with_name(f"libtensorlet-{version}.dist-info"))
    dest = out / "other"
    dest.mkdir(exist_ok=True)
    run([sys.executable, "-m", "wheel", "pack", "-d", dest, unpacked])
    return next(dest.glob(f"libtensorlet-{version}-*.whl"))


@pytest.mark.slow
@pytest.mark.skipif(not have_tool("cmake"), reason="cmake not available")
def test_wheels_install_and_run_in_a_fresh_venv(wheels, tmp_path):
    out = wheels["out"]
    full_house = _wheelhouse(out, wheels["house"], "house-full", wheels["full"])
    split_house = _wheelhouse(out, wheels["house"], "house-split", wheels["library"], wheels["python"])
    numpy_only = _wheelhouse(out, wheels["house"], "house-numpy")
    venv.EnvBuilder(with_pip=True, clear=True).create(tmp_path / "venv")  # the one venv, reused
    python = tmp_path / "venv" / "bin" / "python"
    here = tmp_path / "cwd"  # not the sources: import what was installed
    here.mkdir()
    expected = {"version": VERSION, "y": 14.0, "grad": [2.0, 4.0, 6.0]}

    # (a) the full wheel alone.
    _pip(python, "install", "-q", "--no-index", "--find-links", full_house, wheels["full"])
    got = json.loads(_probe(python, here).stdout)
    assert got["source"] == "tensorlet" and {k: got[k] for k in expected} == expected
    assert Path(got["prefix"]).parts[-3:] == ("tensorlet", "share", "cmake")
    assert _consumer(got["prefix"], tmp_path / "consumer-full") == "add: 2 3 4 5\nsum: 14\n"
    _pip(python, "uninstall", "-q", "-y", "tensorlet")

    # (b) tensorlet and libtensorlet together: pip pulls libtensorlet for the pin.
    _pip(python, "install", "-q", "--no-index", "--find-links", split_house, "tensorlet")
    listed = _pip(python, "list", "--format=json").stdout
    assert {"libtensorlet", "tensorlet"} <= {p["name"] for p in json.loads(listed)}
    got = json.loads(_probe(python, here).stdout)
    assert got["source"] == "libtensorlet" and {k: got[k] for k in expected} == expected
    assert Path(got["prefix"]).parts[-3:] == ("libtensorlet", "share", "cmake")
    assert _consumer(got["prefix"], tmp_path / "consumer-split") == "add: 2 3 4 5\nsum: 14\n"
    _pip(python, "uninstall", "-q", "-y", "tensorlet", "libtensorlet")

    # (c) tensorlet without libtensorlet: pip refuses; forced with --no-deps, the import names it.
    refused = _pip(python, "install", "--no-index", "--find-links", numpy_only, wheels["python"], check=False)
    assert refused.returncode != 0 and "libtensorlet" in refused.stdout + refused.stderr
    _pip(python, "install", "-q", "--no-index", "--no-deps", wheels["python"])
    failed = _probe(python, here, check=False)
    assert failed.returncode != 0 and "ImportError" in failed.stderr
    assert f"pip install 'libtensorlet=={VERSION}'" in failed.stderr and "libtensorlet.so" in failed.stderr

    # (d) libtensorlet of another version: a clear error at import.
    _pip(python, "install", "-q", "--no-index", "--no-deps", _mismatched_library(wheels["library"], "0.0.9", out))
    mismatch = _probe(python, here, check=False)
    assert mismatch.returncode != 0 and "ImportError" in mismatch.stderr
    assert "libtensorlet 0.0.9 is installed" in mismatch.stderr
    assert f"pip install 'libtensorlet=={VERSION}'" in mismatch.stderr


@pytest.mark.slow
def test_full_build_is_back_in_full_mode(wheels):
    """The other tests of the session still see the feature-complete build."""
    full_build = wheels["full_build"]
    assert (full_build.package / "lib" / "libtensorlet.so").exists()
    assert (full_build.package / "lib" / "libtensorlet_python.so").exists()
    out = full_build.python_run(
        "import tensorlet; print(tensorlet._libraries.source, (tensorlet.ones(3) * 2).sum().item())")
    assert out.stdout.split()[-2:] == ["tensorlet", "6.0"]
