"""The rows of ``buildkit doctor``'s table (:mod:`.doctor`, :mod:`.doctor_cuda`)."""

from __future__ import annotations

from dataclasses import dataclass

from buildkit.builder.toolchain.tools import Tool
from buildkit.errors import BuildkitError


@dataclass(frozen=True)
class Check:
    name: str
    version: str = ""
    path: str = ""
    status: str = "ok"  # "ok", "note" (worth knowing, not a failure) or "problem"
    detail: str = ""  # what is wrong, for notes and problems
    fix: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "problem"

    def row(self) -> tuple[str, ...]:
        status = self.status if not self.detail else f"{self.status}: {self.detail}"
        return self.name, self.version or "-", self.path or "-", status, self.fix


def tool_found(name: str, tool: Tool) -> Check:
    return Check(name, tool.version, str(tool.path))


def problem_row(name: str, error: BuildkitError, version: str = "", path: str = "") -> Check:
    return Check(name, version, path, "problem", error.message, error.hint or "")
