"""The install step: only what changed goes into the package tree.

A no-op rebuild must rewrite no installed file (IDEs, editable installs and
``import`` all watch those mtimes) and should not even start CMake; a rebuild after
one edit must cost about one file's copy, however many files the project installs.

Each install rule of ``cmake_install.cmake`` is a unit (:mod:`buildkit.builder.install.script`)
with a record of its last install (:mod:`buildkit.builder.install.record`):

* a *tree* rule (``install(FILES)``/``install(DIRECTORY)`` of source files) that CMake
  installed before: buildkit copies each changed file itself, atomically, keeping the
  installed copy's mode; when files were added to or removed from its folders the rule
  goes through CMake again, which applies its PATTERN/EXCLUDE rules;
* every other rule (targets, whose rpath CMake rewrites while installing, exports,
  ``CODE``/``SCRIPT``, file sets) runs through CMake, in a script of only the rules
  whose inputs changed, with ``CMAKE_INSTALL_ALWAYS`` set for them alone: CMake's
  own check trusts times within a second of each other.  A rule that names no input
  (``install(CODE)``) runs when another rule of its component runs;
* a rule that is gone has its files removed.

While an install runs, a marker says so: after an interruption the next run installs
every rule again.  A script this reader does not understand falls back to a whole
``cmake --install``, with a warning saying why.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from buildkit._util import console
from buildkit._util.fileutil import write_atomic, write_text_if_changed
from buildkit.builder.build_output import StepResult, log_dir, run_step
from buildkit.builder.build_state import INSTALL_MANIFEST, install_state_name, state_path
from buildkit.builder.install import record as install_record
from buildkit.builder.install import shadows as module_shadows
from buildkit.builder.install import summary as install_summary
from buildkit.builder.install import tree as install_tree
from buildkit.builder.install.destinations import DestinationCheck, check_written
from buildkit.builder.install.manifest import InstallManifests, manifest_copy, prefix_key
from buildkit.builder.install.plan import InstallCheck, Plan
from buildkit.builder.install.record import (
    Fingerprint,
    InstallRecord,
    UnitRecord,
    fingerprint,
    folder_times,
    verified_path,
)
from buildkit.builder.install.script import (
    SCRIPT,
    InstallScripts,
    InstallUnit,
    UnreadableScript,
    partial_script,
    read_partial_output,
    read_units,
)
from buildkit.builder.install.times import redate_second_cut_installs

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured)
if TYPE_CHECKING:
    from collections.abc import Iterable

    from buildkit.builder.install.summary import ScanKey


class PackageTreeInstall:
    """The install of one build folder into one prefix.  One build folder may install into
    several prefixes (the package tree for develop, a staging folder for a wheel): each
    keeps its own record, so switching between them never takes one for the other.

    ``install_root``: the folder the install may write in, the prefix itself unless
    ``install-dir`` moved the prefix below the wheel's root (then that root, which
    ``${SKBUILD_PLATLIB_DIR}`` names).  The record and the manifest are the root's: an
    install into another install-dir folder of the same tree finds the files of the last
    one, and removes those it no longer installs."""

    def __init__(self, build_dir: Path, install_prefix: Path, cmake: Path, build_type: str, *,
                 install_root: Path | None = None, verbose: bool = False, manifests: InstallManifests | None = None):
        self.build_dir = Path(build_dir)
        self.install_prefix = Path(install_prefix).absolute()
        self.install_root = Path(install_root or install_prefix).absolute()
        self.cmake = cmake
        self.build_type = build_type
        self.verbose = verbose
        key = prefix_key(self.install_root)
        self.record_path = Path(state_path(self.build_dir, install_state_name("record", key)))
        self.pending = Path(state_path(self.build_dir, install_state_name("pending", key)))
        self.manifest_copy = manifest_copy(self.build_dir, self.install_root)
        self.manifests = manifests or InstallManifests(self.build_dir)  # the command's, when it has one
        self.script_path = Path(state_path(self.build_dir, install_state_name("script", key)))
        self.summary_path = Path(state_path(self.build_dir, install_state_name("summary", key)))
        self.output_path = Path(state_path(self.build_dir, install_state_name("output", key)))
        self.outputs_changed = False  # the last install() added or removed installed files
        self._resolved_build_dir = str(self.build_dir.resolve())  # CMake's install script names it so

    # ------------------------------------------------------------------ entry
    def check(self, scans: dict[ScanKey, dict[str, Fingerprint]] | None = None,
              early: InstallCheck | None = None) -> InstallCheck:
        """What an install would do now; reads only.  ``scans``: tree rules' sources scanned
        since the build's last change (by :func:`install_summary.scan_key`), not scanned again.
        ``early``: a check made while the build ran, by this process, holding the build
        folder's lock, with the install scripts not regenerated since (the caller knows):
        its script, record and the trees planned from scans still given are taken over."""
        if early is not None and early.scripts is not None:
            scripts, unfinished, record = early.scripts, early.unfinished, early.record
        else:
            try:
                scripts = read_units(self.build_dir / SCRIPT)
            except (UnreadableScript, OSError, UnicodeDecodeError, AttributeError) as exc:
                return InstallCheck(unreadable=f"buildkit could not read {self.build_dir / SCRIPT} rule by rule "
                                               f"({exc})")
            DestinationCheck(self.install_prefix, self.build_dir, self.install_root).check_units(scripts.units)
            unfinished = self.pending.exists()
            record = None if unfinished else install_record.load(self.record_path, self.install_prefix,
                                                                 self.build_type)
        active = [unit for unit in scripts.units if unit.active]
        plan = self._plan(active, record, scans or {}, early.plan if early is not None else None)
        gone = set(record.units) - {unit.key for unit in active} if record else set()
        return InstallCheck(scripts, active, record, plan, unfinished=unfinished,
                            current=plan.is_empty() and not gone and record is not None)

    def install(self, build: StepResult | None = None, scans: dict[ScanKey, dict[str, Fingerprint]] | None = None,
                early: InstallCheck | None = None) -> StepResult | None:
        """Install what changed; None when nothing had to be installed or removed.  ``scans``
        and ``early``: as for :meth:`check`."""
        started, clock = time.time(), time.perf_counter()
        check = self.check(scans, early)
        if check.unreadable:
            return self._install_everything(check.unreadable)
        scripts, active, record, plan = check.scripts, check.active, check.record, check.plan
        assert scripts is not None, "a check that is not unreadable read the install script"
        if check.unfinished:
            console.info("the last install into this prefix did not finish: installing every rule again")
        if check.current:
            # What was racy, and the files of a folder whose time moved (a version.py generated
            # beside a module installed into the package), were checked: once old, both are trusted.
            moved = record.newest_moved(plan.folder_times) if record else 0
            if (plan.racy_ns or moved) and max(plan.racy_ns, moved) < time.time_ns() - install_summary.RACY_SLACK_NS:
                verified_path(self.record_path).touch()
            self._summarize(check, record, {}, folders=plan.folder_times)
            return None
        for reason in plan.reasons:
            console.detail(f"install: {reason}")
        for path in plan.replaced:  # said always: the tree was not this build's (another interpreter's develop)
            console.info(f"install: {path} was replaced since this build folder installed it; installing it again")
        install_summary.forget(str(self.summary_path))
        self.pending.parent.mkdir(parents=True, exist_ok=True)
        self.pending.touch()
        cmake_started_ns = time.time_ns()
        result = self._run(scripts, plan) if plan.runs else None
        outputs = read_partial_output(self.output_path) if result is not None else {}
        written = [path for paths in outputs.values() for path in paths]
        check_written(written, self.install_root, self.build_dir)
        redate_second_cut_installs(written, cmake_started_ns)
        new = self._new_record(active, record, plan, outputs)
        copied = self._copy_changed(active, plan, record, outputs, new)
        # Before the manifests are rewritten: they say which files buildkit may remove.
        module_shadows.remove_shadowing_modules(
            [path for key in plan.runs for path in new.units[key].outputs]
            + [installed for copies in plan.copies.values() for _, installed in copies], self.build_dir)
        new.installed = {path: fingerprint(path) for unit in active if self._watched(unit) and unit.key in new.units
                         for path in new.units[unit.key].outputs}
        same_outputs = (record is not None and not check.unfinished and set(new.units) == set(record.units)
                        and all(new.units[key].outputs == record.units[key].outputs for key in plan.runs))
        self._finish(new, record if same_outputs else None)
        self._summarize(check, new, copied)
        seconds = time.perf_counter() - clock
        if console.is_verbose():  # counting every installed file expands the record's trees
            console.detail(f"install: {len(plan.runs)} rule(s) through CMake, {len(copied)} file(s) copied "
                           f"directly, {len(new.outputs())} installed file(s) in all, {seconds:.3f} s")
        if result is not None:
            result.seconds = seconds
            return result
        return StepResult("install", 0, seconds, log_dir(self.build_dir) / "install.log", started=started)

    def manifest(self) -> set[str]:
        return set(self.manifests.names(self.manifest_copy))

    def _watched(self, unit: InstallUnit) -> bool:
        """Whether the files ``unit`` installs may differ between build folders: what CMake
        builds or generates (a library, a configured header), not a copy of the sources,
        which every build folder of the project installs the same.  Another build folder's
        install (another interpreter's develop) that replaced one is undone by the next install."""
        build = self._resolved_build_dir
        return not unit.is_tree or any(source == build or source.startswith(build + os.sep) for source in unit.sources)

    # ------------------------------------------------------------------ plan
    def _plan(self, units: list[InstallUnit], record: InstallRecord | None,
              scans: dict[ScanKey, dict[str, Fingerprint]], early: Plan | None = None) -> Plan:
        plan = Plan()
        followers = []
        plan.folder_times = folder_times(record.folders) if record else {}
        touched = record.touched_folders(plan.folder_times) if record else set()
        if record is not None:
            plan.racy_ns = max((t[0] for t in record.folders.values() if record.is_racy([0, t[0]])), default=0)
        for unit in units:
            previous = record.units.get(unit.key) if record else None
            if unit.is_tree:
                plan.scans[unit.key] = scans.get(install_tree.scan_key(unit)) or install_tree.scan(unit)
            if unit.is_tree and previous is not None and previous.is_tree:
                plan.inputs[unit.key] = previous.inputs  # compared file by file instead
            else:
                plan.inputs[unit.key] = {path: fingerprint(path) for path in unit.inputs}
            if previous is None or record is None:  # no record: no previous either
                plan.runs[unit.key] = True
                plan.reasons.append(f"{_describe(unit)}: installed for the first time")
            elif unit.is_tree and previous.is_tree:
                part = early.tree_still_planned(unit.key, plan.scans[unit.key], plan.folder_times) if early else None
                plan.take_tree(unit.key, part or self._plan_tree(unit, previous, record, plan.scans[unit.key],
                                                                 touched))
            elif unit.runs_with_component and not _changed_inputs(unit, previous, plan):
                followers.append(unit)
            elif changed := _changed_inputs(unit, previous, plan):
                plan.runs[unit.key] = True
                plan.reasons.append(f"{_describe(unit)}: changed input {changed[0]}")
            elif missing := install_tree.missing_outputs(previous.outputs, record, touched):
                plan.runs[unit.key] = True
                plan.reasons.append(f"{_describe(unit)}: {missing[0]} is missing from the install")
            if (record is not None and previous is not None and unit.key not in plan.runs and self._watched(unit)
                    and (replaced := record.replaced_outputs(previous.outputs))):
                plan.runs[unit.key] = True  # forced: CMake's own check would keep a newer file
                plan.copies.pop(unit.key, None)
                plan.replaced += replaced
        busy = {unit.component for unit in units if unit.key in plan.runs or plan.copies.get(unit.key)}
        for unit in followers:
            if unit.component in busy:
                plan.runs[unit.key] = True
                plan.reasons.append(f"{_describe(unit)}: names no input; runs with its component {unit.component!r}")
        return plan

    def _plan_tree(self, unit: InstallUnit, previous: UnitRecord, record: InstallRecord, scan: dict[str, Fingerprint],
                   touched: set[str]) -> Plan:
        """What the tree unit needs, from ``scan`` of its sources; a plan of its own."""
        plan = Plan()
        # Only the installed files in this rule's changed folders are looked at: not those of
        # lib/, where a library was just installed, nor the other headers of a tree.
        mine = install_tree.folders_within(touched, previous.roots, str(self.install_prefix))
        edits = previous.edits(scan, record.written_ns - install_summary.RACY_SLACK_NS, look_in=mine)
        if edits is not None:  # the common cases, compared as stored: nothing changed, or files edited
            changed, racy = edits
            plan.racy_ns = max([plan.racy_ns, *(scan[source][1] for source, _ in racy)])
            copies = changed + [pair for pair in racy if install_tree.differs(*pair)]
            plan.add_copies(unit.key, copies)
            return plan
        listing = sorted(scan)
        if listing != previous.listing:
            added = sorted(set(listing) - set(previous.listing or []))
            removed = sorted(set(previous.listing or []) - set(listing))
            plan.runs[unit.key] = False
            plan.reasons.append(f"{_describe(unit)}: files added ({', '.join(added[:3]) or 'none'}) or "
                                f"removed ({', '.join(removed[:3]) or 'none'}): through CMake")
            return plan
        members = previous.members
        assert members is not None, "a tree rule's record has members"
        copies = []
        for installed, (source, recorded) in members.items():
            now = scan.get(source)
            if now is None or now[3] != "file" or recorded[3] != "file":
                if now != recorded:
                    plan.runs[unit.key] = True
                    plan.reasons.append(f"{_describe(unit)}: {source} is no longer a plain file: through CMake")
                    return plan
                continue
            deleted = touched and install_tree.needs_look(installed, record, touched) and not os.path.lexists(installed)
            if now != recorded or deleted:
                copies.append((source, installed))
            elif record.is_racy(recorded):
                plan.racy_ns = max(plan.racy_ns, recorded[1])
                if install_tree.differs(source, installed):
                    copies.append((source, installed))
        plan.add_copies(unit.key, copies)
        return plan

    # ------------------------------------------------------------------- run
    def _run(self, scripts: InstallScripts, plan: Plan) -> StepResult:
        runs = [(unit, plan.runs[unit.key]) for unit in scripts.units if unit.key in plan.runs]
        write_atomic(self.script_path, partial_script(scripts, runs, self.output_path).encode("utf-8"))
        command = [str(self.cmake), f"-DCMAKE_INSTALL_PREFIX={self.install_prefix}",
                   f"-DCMAKE_INSTALL_CONFIG_NAME={self.build_type}", "-P", str(self.script_path)]
        return run_step("install", command, build_dir=self.build_dir, verbose=self.verbose)

    def _new_record(self, units: list[InstallUnit], record: InstallRecord | None, plan: Plan,
                    outputs: dict[str, list[str]]) -> InstallRecord:
        new = InstallRecord(str(self.install_prefix), self.build_type)
        for unit in units:
            previous = record.units.get(unit.key) if record else None
            if unit.key in plan.runs:
                installed = list(dict.fromkeys(outputs.get(unit.key, [])))
                entry = UnitRecord(installed, plan.inputs[unit.key])
                if unit.is_tree:
                    entry.members, entry.roots = install_tree.members_of(unit, installed, self.install_prefix,
                                                                         plan.scans[unit.key])
                    entry.listing = sorted(plan.scans[unit.key]) if entry.members is not None else None
            elif previous is not None:
                entry = previous.with_inputs(plan.inputs[unit.key])
            else:
                continue
            new.units[unit.key] = entry
        return new

    def _copy_changed(self, units: list[InstallUnit], plan: Plan, record: InstallRecord | None,
                      outputs: dict[str, list[str]], new: InstallRecord) -> dict[str, Fingerprint]:
        """Copy the changed files of tree rules; after CMake ran a rule without forcing it
        (files added or removed), also the members it may have judged up to date.  Returns
        each copied source's fingerprint when it was copied."""
        copied: dict[str, Fingerprint] = {}
        for unit in units:
            entry = new.units.get(unit.key)
            if entry is None or not entry.is_tree:
                continue
            copies = list(plan.copies.get(unit.key, ()))
            if plan.runs.get(unit.key) is False and record is not None:
                previous = record.units[unit.key].members or {}
                members = entry.members  # expands a tree still as stored: only here
                assert members is not None, "a tree rule's record has members"
                copies += [(source, installed) for installed, (source, now) in members.items()
                           if install_tree.maybe_changed(previous.get(installed), now, record)
                           and install_tree.differs(source, installed)]
            for source, installed in copies:
                copied[source] = install_tree.copy_file(source, installed)
                entry.set_member(installed, source, copied[source])
        return copied

    def _finish(self, new: InstallRecord, same_as: InstallRecord | None) -> None:
        """Remove what is no longer installed, then record; the marker goes last.  ``same_as``:
        the last install's record when this one installed the same files (files were copied
        or rules rerun, none added or removed), so the manifests stand as they are."""
        if same_as is not None:
            self.outputs_changed = False
            new.folders = folder_times(same_as.folders)
        else:
            previous = self.manifest()
            current = new.outputs()
            self.outputs_changed = previous != current
            self.prune_stale(previous - current)
            new.folders = folder_times({os.path.dirname(path) for path in current})
            listing = "".join(f"{path}\n" for path in sorted(current))
            write_atomic(self.manifest_copy, listing.encode("utf-8"))
            write_text_if_changed(self.build_dir / INSTALL_MANIFEST, listing)
        install_record.save(self.record_path, new)
        self.pending.unlink(missing_ok=True)

    def _summarize(self, check: InstallCheck, record: InstallRecord | None, copied: dict[str, Fingerprint],
                   folders: dict[str, list[int]] | None = None) -> None:
        """What the no-op develop's first stage compares (:mod:`buildkit.builder.install.summary`):
        the tree as this check found it, with the sources this install ``copied`` as they were
        when copied (the record holds the same, without its trees being expanded), and the
        installed folders' times: the record's, or ``folders`` as a check read them."""
        if check.scripts is None or record is None:
            return
        trees: list[tuple[list[str], bool, dict[str, Fingerprint]]] = []
        inputs: dict[str, Fingerprint | None] = {}
        for unit in check.active:
            entry = record.units.get(unit.key)
            if entry is None:
                return
            if self._watched(unit):
                inputs.update((path, record.installed[path]) for path in entry.outputs if path in record.installed)
            if not unit.is_tree:
                inputs.update(entry.inputs)
                continue
            if not entry.is_tree or unit.key not in check.plan.scans:
                return
            expected = dict(check.plan.scans[unit.key])
            expected.update((source, fp) for source, fp in copied.items() if source in expected)
            trees.append((*install_tree.scan_spec(unit), expected))
        install_summary.save(str(self.summary_path), record_path=str(self.record_path),
                             verified_path=str(verified_path(self.record_path)), pending_path=str(self.pending),
                             scripts=[str(script) for script in check.scripts.scripts], inputs=inputs,
                             trees=trees, folders=record.folders if folders is None else folders)

    def _install_everything(self, reason: str) -> StepResult:
        console.warn(f"{reason}; installing with a whole `cmake --install` each time, which copies every file.")
        DestinationCheck(self.install_prefix, self.build_dir, self.install_root).check_scripts()
        install_summary.forget(str(self.summary_path))
        self.pending.parent.mkdir(parents=True, exist_ok=True)
        self.pending.touch()
        self.record_path.unlink(missing_ok=True)
        command = [str(self.cmake), "--install", str(self.build_dir), "--config", self.build_type,
                   "--prefix", str(self.install_prefix)]
        cmake_started_ns = time.time_ns()
        result = run_step("install", command, build_dir=self.build_dir, verbose=self.verbose,
                          env={**os.environ, "CMAKE_INSTALL_ALWAYS": "1"})
        written = set(self.manifests.names(self.build_dir / INSTALL_MANIFEST))
        # On a refusal the pending marker stays: the next run installs again.
        check_written(written, self.install_root, self.build_dir)
        redate_second_cut_installs(sorted(written), cmake_started_ns)
        module_shadows.remove_shadowing_modules(sorted(written), self.build_dir)
        self.outputs_changed = self.manifest() != written
        self.prune_stale(self.manifest() - written)
        write_atomic(self.manifest_copy, "".join(f"{p}\n" for p in sorted(written)).encode("utf-8"))
        self.pending.unlink(missing_ok=True)
        return result

    def prune_stale(self, stale: set[str]) -> None:
        """Remove what an earlier install put into the package tree and this one no longer
        installs (a component switched off), so it can't ship in a wheel by accident.  Another
        interpreter's module stays: developing under 3.11 and 3.12 by turns keeps both
        importable (a wheel leaves such a module out)."""
        prune(stale, self.install_root)  # an earlier install-dir folder's files too

    def replaced(self, paths: Iterable[str]) -> list[str]:
        """Those of ``paths`` that this folder's last install wrote as its build's own output (not a
        copy of a source) and that another install has written over since."""
        record = install_record.load(self.record_path, self.install_prefix, self.build_type)
        return record.replaced_outputs(paths) if record else []

    def withdraw(self, keep: set[str]) -> list[str]:
        """Take this build folder's last install out of the prefix (a build type that a build-type
        list no longer builds): its files go, except those in ``keep`` (another build's), and its
        record, so that a later install starts anew.  Returns the files removed."""
        removed = prune(self.manifest() - keep, self.install_root)
        install_summary.forget(str(self.summary_path))
        for path in (self.record_path, self.manifest_copy):
            path.unlink(missing_ok=True)
        return removed


def prune(stale: set[str], install_root: Path) -> list[str]:
    """:meth:`PackageTreeInstall.prune_stale` for the files ``stale`` inside ``install_root``;
    returns those removed."""
    prefix = install_root.resolve()
    removed = []
    for name in sorted(stale, reverse=True):
        path = Path(name)
        if not path.is_absolute() or not path.resolve().is_relative_to(prefix) or not os.path.lexists(path):
            continue
        if module_shadows.another_interpreters_module(name):
            console.detail(f"kept {path}: a module another interpreter's develop installed")
            continue
        path.unlink()
        removed.append(name)
        console.detail(f"removed stale install output {path}")
        parent = path.parent
        while parent.resolve() != prefix and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return removed


def _describe(unit: InstallUnit) -> str:
    what = f"install({unit.tree_type}S) of {', '.join(unit.sources[:2])}" if unit.is_tree else "install rule"
    return f"{what} [{unit.script.parent.name}/{SCRIPT} {unit.key[:8]}]"


def _changed_inputs(unit: InstallUnit, previous: UnitRecord, plan: Plan) -> list[str]:
    return [path for path in unit.inputs if plan.inputs[unit.key][path] != previous.inputs.get(path)]
