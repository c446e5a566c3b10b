from __future__ import annotations

from typing import Optional


class device:
    """tensorlet.device("cuda:0") / device("cpu") / device("cuda", 1)."""

    __slots__ = ("type", "index")

    def __init__(self, spec: "str | device", index: Optional[int] = None):
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        kind, _, idx = str(spec).partition(":")
        if kind not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, meta device type at start of device string: {spec}")
        self.type = kind
        self.index = int(idx) if idx else index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))
