"""The no-op ``buildkit develop``'s second stage, and the record the first one reads.

:mod:`buildkit.frontends.noop_develop` found the recorded inputs unchanged, took the
build folder's lock and started ninja; it comes here when ninja has work, failed, or
the package tree may have changed (:mod:`buildkit.builder.install.summary` could not
say it is current).  ninja's output is shown as any build's is, and the install step
installs what changed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from buildkit.builder.build_output import StepResult, print_summary, run_step
from buildkit.builder.install.step import PackageTreeInstall
from buildkit.builder.ninja_status import outputs_since, writes_only_its_outputs
from buildkit.frontends import noop_record

if TYPE_CHECKING:
    from buildkit._util.spawn import Process
    from buildkit.builder.install.summary import ScanKey, Stamp
    from buildkit.project import Project


def finish(record: dict[str, Any], build: Process, started: float, scans: dict[ScanKey, dict[str, Stamp]],
           log_before: tuple[int, int] | None) -> bool:
    """Read ninja's output and install what changed; True when that was the whole command.
    ``started``: when the first stage started ninja.
    ``scans``: the first stage's scans of the tree rules' sources, taken while ninja ran;
    ``log_before``: ``.ninja_log``'s stamp before ninja started."""
    build_dir = Path(record["build_dir"])
    installer = PackageTreeInstall(build_dir, Path(record["install_prefix"]), Path(record["cmake"]),
                                   record["build_type"], install_root=Path(record["install_root"]))
    # While ninja still builds: the install record read, the script read and each tree rule's
    # sources compared with it (8,000 headers), so that after the build only what the build
    # can have changed is looked at again.
    early = installer.check(scans)
    scans = early.tree_scans() or scans  # its own scans where the summary had none to give
    result = run_step("build", record["build_command"], build_dir=build_dir, verbose=False, jobs=record["jobs"],
                      process=build)
    build_finished = time.perf_counter()
    if noop_record.regenerated(record):
        return False  # CMake regenerated the build: the full command reads it again
    installed = installer.install(result, scans=_still_valid(scans, result, record["build_dir"], log_before),
                                  early=early)
    if installed is not None and installer.outputs_changed:
        return False
    # ninja started in the first stage, which read its first lines: the build took from then
    # (run_step's own clock starts when this stage takes its output over).
    build_seconds = build_finished - started
    timings = [("build", build_seconds), *([("install", installed.seconds)] if installed else [])]
    print_summary(timings, result.steps)
    return True


def _still_valid(scans: dict[ScanKey, dict[str, Stamp]], result: StepResult, build_dir: str,
                 log_before: tuple[int, int] | None) -> dict[ScanKey, dict[str, Stamp]]:
    """The scans no edge of this build can have changed: all of them when ninja ran none;
    when it ran only compiles and links (which write nothing but their outputs), those of
    tree rules below whose sources ninja's log shows no output written; else none."""
    if not result.steps:
        return scans
    written = outputs_since(build_dir, log_before)
    if written is None or not all(writes_only_its_outputs(edge) for edge in result.edges):
        return {}
    return {key: scan for key, scan in scans.items()
            if not any(path == source or path.startswith(source + os.sep) for path in written for source in key[:-1])}


def record(project: Project, register: bool) -> None:
    """After a successful develop/build of ``project``: what a no-op depends on."""
    if not project.built:
        return
    build_dir = project.build_dir
    files, build = _cmake_build(project) if project.settings.cmake else ([], NO_BUILD)
    # The build folder's records, less the install's own (which the install step checks
    # itself, and rewrites after each edit) and this one.
    for folder in [build_dir, *(Path(other["build_dir"]) for other in build["build_types"])]:
        files += [str(p) for p in sorted((folder / ".buildkit").glob("*.json")) if not p.name.startswith("install-")]
    files += [str(project.root / project.settings.version_file),
              str(project.root / project.settings.readme)]  # the registration's METADATA holds the README
    stub = project.settings.extension
    files += [str(project.root / source) for source in (stub.sources if stub else ())]
    files += noop_record.buildkit_files()
    files = list(dict.fromkeys(files))
    folders = [str(folder) for folder in project.settings.configuration_inputs]  # a buildkit.torch setup.py's globs
    settings = project.settings  # the package folder, and where the tree's layout would find it first
    searched = settings.layout.searched_folders(settings.package)
    packages = list(dict.fromkeys([str(settings.package_dir), *(str(project.root / path) for path in searched)]))
    roots = [str(project.root / folder) for folder in project.settings.layout.deciding_folders]
    root = str(project.root)
    noop_record.write_record(str(build_dir), {
        "files": files, "folders": folders, "packages": packages, "roots": roots,
        "inputs": noop_record.inputs(root, register, files, folders, packages=packages, roots=roots),
        "build_dir": str(build_dir), **build})


# A project without a CMake part (`cmake = false`): no build command, which the first stage
# takes for nothing to build or install (its inputs decide alone).
NO_BUILD: dict[str, Any] = {"build_command": [], "jobs": 0, "distributed": False, "install_prefix": "",
                            "install_root": "", "cmake": "",
                            "build_type": "", "install_summary": "", "build_types": []}


def _cmake_build(project: Project) -> tuple[list[str], dict[str, Any]]:
    """What the no-op of a CMake build depends on besides the project's files (what CMake
    regenerates, the tools), and how its first stage builds and installs."""
    driver = project.driver()
    tools = driver._tools()
    jobs = driver.job_count()
    # A distributed build compiles in the full command's session (the build folder's sccache server,
    # sized to the cluster, local when it fails): the first stage's ninja only looks (-n) for work.
    distributed = driver.arguments.distributed_launcher() is not None
    looks = ["-n"] if distributed and Path(driver.build_command(jobs)[0]).stem == "ninja" else []
    files = noop_record.regenerated_files(str(project.build_dir))
    files += [str(tool.path) for tool in tools.tools().values() if tool is not None]
    target = project.target
    others = []
    for build_type in project.options.extra_build_types:  # a build-type list's others, each in its folder
        other = project.driver(build_type)
        files += noop_record.regenerated_files(str(other.build_dir))
        files += [str(tool.path) for tool in other._tools().tools().values() if tool is not None]
        others.append({"build_dir": str(other.build_dir), "build_command": [*other.build_command(jobs), *looks],
                       "install_summary": str(other.installer().summary_path)})
    return files, {"build_command": [*driver.build_command(jobs), *looks], "jobs": jobs, "distributed": distributed,
                   "install_prefix": str(target.install_prefix), "install_root": str(target.install_root),
                   "cmake": str(tools.cmake.path), "build_type": driver.build_type(),
                   "install_summary": str(driver.installer().summary_path), "build_types": others}
