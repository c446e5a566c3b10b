"""ops.yaml / derivatives.yaml <-> dataclasses.

Both files use one canonical layout (a comment header, then one block per entry
separated by a blank line); ``emit_*(parse_*(text)) == text`` for files in that
layout, and the emitted text always loads back to the same YAML data."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

import yaml

from .model import FunctionSchema

RUNTIME_BACKENDS = ("CPU", "CUDA", "Meta")
ALIAS_KEYS = ("CompositeExplicitAutograd", "CompositeImplicitAutograd")
KNOWN_VARIANTS = ("function", "method")


@dataclass(frozen=True)
class NativeFunction:
    func: FunctionSchema
    variants: tuple[str, ...] = ("function",)
    # ((("CPU", "Meta"), "add_impl"), (("CUDA",), "add_cuda")) in file order
    dispatch: tuple[tuple[tuple[str, ...], str], ...] = ()
    variants_written: bool = False  # keep "variants: function" lines that were spelled out

    @property
    def kernels(self) -> dict[str, str]:
        """Dispatch key -> kernel; no entry means CompositeImplicitAutograd."""
        if not self.dispatch:
            return {"CompositeImplicitAutograd": self.func.name.unambiguous + "_composite"}
        return {key: kernel for keys, kernel in self.dispatch for key in keys}

    @property
    def is_composite_implicit(self) -> bool:
        return "CompositeImplicitAutograd" in self.kernels


@dataclass(frozen=True)
class DerivativeInfo:
    name: FunctionSchema
    formulas: tuple[tuple[str, str], ...]  # (input name, C++ expression) in file order
    output_differentiability: Optional[tuple[bool, ...]] = None

    @property
    def differentiable(self) -> bool:
        return self.output_differentiability is None or any(self.output_differentiability)


@dataclass
class YamlFile:
    header: list[str] = field(default_factory=list)  # leading comment lines, verbatim
    entries: list[Any] = field(default_factory=list)


# -- generic block emitter ------------------------------------------------------

def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    text = str(value)
    try:
        if yaml.safe_load(f"k: {text}") == {"k": text}:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text)


def _emit_entry(pairs: list[tuple[str, Any]]) -> str:
    lines = []
    for i, (key, value) in enumerate(pairs):
        prefix = "- " if i == 0 else "  "
        if isinstance(value, dict):
            lines.append(f"{prefix}{key}:")
            lines.extend(f"    {k}: {_scalar(v)}" for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            lines.append(f"{prefix}{key}: [{', '.join(_scalar(v) for v in value)}]")
        else:
            lines.append(f"{prefix}{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def _emit(header: list[str], blocks: list[list[tuple[str, Any]]]) -> str:
    parts = []
    if header:
        parts.append("\n".join(header) + "\n")
    parts.extend(_emit_entry(b) for b in blocks)
    return "\n".join(parts)


def _split(text: str) -> tuple[list[str], list[dict]]:
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    data = yaml.safe_load(text) or []
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise ValueError("expected a YAML list of mappings")
    return header, data


# -- ops.yaml -------------------------------------------------------------------

def parse_ops(text: str) -> YamlFile:
    header, data = _split(text)
    out = YamlFile(header)
    for entry in data:
        unknown = set(entry) - {"func", "variants", "dispatch"}
        if unknown:
            raise ValueError(f"{entry.get('func')}: unknown keys {sorted(unknown)}")
        func = FunctionSchema.parse(entry["func"])
        variants = tuple(v.strip() for v in entry.get("variants", "function").split(","))
        if any(v not in KNOWN_VARIANTS for v in variants):
            raise ValueError(f"{func}: variants must be among {KNOWN_VARIANTS}")
        dispatch = []
        for keys, kernel in (entry.get("dispatch") or {}).items():
            key_tuple = tuple(k.strip() for k in keys.split(","))
            for k in key_tuple:
                if k not in RUNTIME_BACKENDS + ALIAS_KEYS:
                    raise ValueError(f"{func}: unknown dispatch key {k}")
            dispatch.append((key_tuple, kernel))
        out.entries.append(NativeFunction(func, variants, tuple(dispatch), "variants" in entry))
    return out


def emit_ops(f: YamlFile) -> str:
    blocks = []
    for nf in f.entries:
        pairs: list[tuple[str, Any]] = [("func", str(nf.func))]
        if nf.variants_written or nf.variants != ("function",):
            pairs.append(("variants", ", ".join(nf.variants)))
        if nf.dispatch:
            pairs.append(("dispatch", {", ".join(keys): kernel for keys, kernel in nf.dispatch}))
        blocks.append(pairs)
    return _emit(f.header, blocks)


# -- derivatives.yaml ---------------------------------------------------------------

def parse_derivatives(text: str) -> YamlFile:
    header, data = _split(text)
    out = YamlFile(header)
    for entry in data:
        schema = FunctionSchema.parse(entry["name"])
        diff = entry.get("output_differentiability")
        formulas = tuple((k, str(v)) for k, v in entry.items() if k not in ("name", "output_differentiability"))
        names = {a.name for a in schema.arguments}
        for k, _ in formulas:
            if k not in names:
                raise ValueError(f"{schema}: formula for unknown input {k!r}")
        out.entries.append(DerivativeInfo(schema, formulas, tuple(diff) if diff is not None else None))
    return out


def emit_derivatives(f: YamlFile) -> str:
    blocks = []
    for d in f.entries:
        pairs: list[tuple[str, Any]] = [("name", str(d.name))]
        if d.output_differentiability is not None:
            pairs.append(("output_differentiability", list(d.output_differentiability)))
        pairs.extend(d.formulas)
        blocks.append(pairs)
    return _emit(f.header, blocks)
