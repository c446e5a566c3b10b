"""The no-op ``buildkit develop``'s second stage, and the record the first one reads.

:mod:`buildkit.frontends.noop_develop` found the recorded inputs unchanged, took the
build folder's lock and started ninja; it comes here when ninja has work, failed, or
the package tree may have changed (:mod:`buildkit.builder.install_summary` could not
say it is current).  ninja's output is shown as any build's is, and the install step
installs what changed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from buildkit._util.fileutil import write_atomic
from buildkit.builder.build_output import print_summary, run_step
from buildkit.builder.install_step import PackageTreeInstall
from buildkit.frontends import noop_develop

if TYPE_CHECKING:
    from buildkit._util.spawn import SpawnedProcess
    from buildkit.project import Project


def finish(record: dict, build: "SpawnedProcess", started: float) -> bool:
    """Read ninja's output and install what changed; True when that was the whole command."""
    build_dir = Path(record["build_dir"])
    result = run_step("build", record["build_command"], build_dir=build_dir, verbose=False, jobs=record["jobs"],
                      process=build)
    if noop_develop.regenerated(record):
        return False  # CMake regenerated the build: the full command reads it again
    installer = PackageTreeInstall(build_dir, Path(record["install_prefix"]), Path(record["cmake"]),
                                   record["build_type"])
    installed = installer.install(result)
    if installed is not None and installer.outputs_changed:
        return False
    timings = [("build", result.seconds), *([("install", installed.seconds)] if installed else [])]
    print_summary(timings if installed or result.steps else [("build", time.perf_counter() - started)],
                  result.steps)
    return True


def record(project: "Project", register: bool) -> None:
    """After a successful develop/build of ``project``: what a no-op depends on."""
    if project.build_dir != project.root / "build" or not project.built:
        return  # another build folder: the no-op goes through the full command
    driver = project.driver()
    tools = driver._tools()
    jobs = driver.job_count()
    build_dir = project.build_dir
    files = noop_develop.regenerated_files(str(build_dir))
    # The build folder's records, less the install's own (which the install step checks
    # itself, and rewrites after each edit) and this one.
    files += [str(p) for p in sorted((build_dir / ".buildkit").glob("*.json")) if not p.name.startswith("install-")]
    files += [str(tool.path) for tool in tools.tools().values() if tool is not None]
    files += [str(project.settings.package_dir), str(project.root / project.settings.version_file),
              str(project.root / project.settings.readme)]  # the registration's METADATA holds the README
    stub = project.settings.extension
    files += [str(project.root / source) for source in (stub.sources if stub else ())]
    files += noop_develop.buildkit_files()
    files = list(dict.fromkeys(files))
    root = str(project.root)
    installer = PackageTreeInstall(build_dir, project.install_prefix, tools.cmake.path, driver.build_type())
    write_atomic(project.root / noop_develop.RECORD, noop_develop.record_bytes({
        "files": files, "inputs": noop_develop.inputs(root, register, files),
        "build_dir": str(build_dir), "build_command": list(driver.build_command(jobs)), "jobs": jobs,
        "install_prefix": str(project.install_prefix), "cmake": str(tools.cmake.path),
        "build_type": driver.build_type(), "install_summary": str(installer.summary_path),
    }))
