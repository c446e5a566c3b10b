"""What one install does, unit by unit (:class:`Plan`), and what a check found before it
(:class:`InstallCheck`): the install step (``step.py``) makes them, the no-op's second
stage hands an early check over."""

from __future__ import annotations

from dataclasses import dataclass, field

from buildkit.builder.install import tree as install_tree
from buildkit.builder.install.record import Fingerprint, InstallRecord
from buildkit.builder.install.script import InstallScripts, InstallUnit

TYPE_CHECKING = False  # typing costs ~8 ms to import (measured)
if TYPE_CHECKING:
    from buildkit.builder.install.summary import ScanKey


@dataclass
class Plan:
    """What this install does, unit by unit."""

    runs: dict[str, bool] = field(default_factory=dict)  # unit key -> through CMake, forced
    copies: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # unit key -> (source, installed)
    # unit key -> its inputs' fingerprints now
    inputs: dict[str, dict[str, Fingerprint | None]] = field(default_factory=dict)
    scans: dict[str, dict[str, Fingerprint]] = field(default_factory=dict)  # tree unit key -> files below its sources
    reasons: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # installed files another install wrote over since
    racy_ns: int = 0  # the newest recorded time that was too recent to trust, 0 if none
    folder_times: dict[str, list[int]] = field(default_factory=dict)  # the installed folders' times when planned
    trees: dict[str, Plan] = field(default_factory=dict)  # tree unit key -> what was planned for it alone

    def is_empty(self) -> bool:
        return not self.runs and not any(self.copies.values())

    def add_copies(self, key: str, copies: list[tuple[str, str]]) -> None:
        if copies:
            self.copies[key] = copies
            self.reasons += [f"copy {source} -> {installed}" for source, installed in copies]

    def take_tree(self, key: str, part: Plan) -> None:
        """What was planned for the tree unit ``key`` alone, as part of this plan."""
        self.trees[key] = part
        self.runs.update(part.runs)
        self.copies.update(part.copies)
        self.reasons += part.reasons
        self.racy_ns = max(self.racy_ns, part.racy_ns)

    def tree_still_planned(self, key: str, scan: dict[str, Fingerprint],
                           folder_times: dict[str, list[int]]) -> Plan | None:
        """This (earlier) plan's part for the tree unit ``key``, when it was planned from the
        very same ``scan`` and the installed folders have not changed since; else None."""
        part = self.trees.get(key)
        if part is None or self.scans.get(key) is not scan or self.folder_times != folder_times:
            return None
        return part


@dataclass
class InstallCheck:
    scripts: InstallScripts | None = None
    active: list[InstallUnit] = field(default_factory=list)
    record: InstallRecord | None = None
    plan: Plan = field(default_factory=Plan)
    unfinished: bool = False
    current: bool = False  # nothing to install or remove
    unreadable: str | None = None  # why the script was not read rule by rule

    def tree_scans(self) -> dict[ScanKey, dict[str, Fingerprint]]:
        """The scans this check planned the tree rules from, named as :meth:`PackageTreeInstall.check` takes them."""
        return {install_tree.scan_key(unit): self.plan.scans[unit.key] for unit in self.active
                if unit.is_tree and unit.key in self.plan.scans}
