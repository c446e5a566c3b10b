"""Schema dataclasses. ``FunctionSchema.parse(text)`` and ``str(schema)`` are exact
inverses for every schema in ops.yaml (the tests check this)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

BASE_TYPES = ("Tensor", "Scalar", "float", "int", "bool", "ScalarType", "Device")


@dataclass(frozen=True)
class Annotation:
    """The alias annotation of ``Tensor(a!)``: alias set ``a``, written when ``!``."""

    alias_set: str
    is_write: bool

    @staticmethod
    def parse(text: str) -> "Annotation":
        write = text.endswith("!")
        name = text[:-1] if write else text
        if not re.fullmatch(r"[a-z]", name):
            raise ValueError(f"bad alias annotation {text!r}")
        return Annotation(name, write)

    def __str__(self) -> str:
        return self.alias_set + ("!" if self.is_write else "")


@dataclass(frozen=True)
class Type:
    base: str
    is_list: bool = False
    list_size: Optional[int] = None
    optional: bool = False

    @staticmethod
    def parse(text: str) -> "Type":
        m = re.fullmatch(r"(\w+)(\[(\d*)\])?(\?)?", text)
        if not m or m.group(1) not in BASE_TYPES:
            raise ValueError(f"unknown type {text!r}")
        size = m.group(3)
        return Type(m.group(1), m.group(2) is not None, int(size) if size else None, m.group(4) is not None)

    def __str__(self) -> str:
        s = self.base
        if self.is_list:
            s += f"[{self.list_size if self.list_size is not None else ''}]"
        return s + ("?" if self.optional else "")

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: Optional[str] = None
    annotation: Optional[Annotation] = None
    kwarg_only: bool = False

    @staticmethod
    def parse(text: str, kwarg_only: bool = False) -> "Argument":
        decl, _, default = text.partition("=")
        type_text, _, name = decl.strip().rpartition(" ")
        if not type_text:
            raise ValueError(f"argument {text!r} needs a type and a name")
        annotation = None
        m = re.fullmatch(r"(\w+)\(([^)]*)\)(.*)", type_text)
        if m:
            annotation = Annotation.parse(m.group(2))
            type_text = m.group(1) + m.group(3)
        return Argument(name, Type.parse(type_text), default.strip() if default else None, annotation, kwarg_only)

    def type_str(self) -> str:
        text = str(self.type)
        if self.annotation:
            cut = len(self.type.base)
            text = f"{text[:cut]}({self.annotation}){text[cut:]}"
        return text

    def __str__(self) -> str:
        s = f"{self.type_str()} {self.name}"
        return s if self.default is None else f"{s}={self.default}"

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write


@dataclass(frozen=True)
class Return:
    type: Type
    annotation: Optional[Annotation] = None
    name: Optional[str] = None

    @staticmethod
    def parse(text: str) -> "Return":
        type_text, _, name = text.strip().partition(" ")
        arg = Argument.parse(f"{type_text} _")
        return Return(arg.type, arg.annotation, name or None)

    def __str__(self) -> str:
        text = Argument("_", self.type, annotation=self.annotation).type_str()
        return f"{text} {self.name}" if self.name else text


@dataclass(frozen=True)
class OperatorName:
    name: str
    overload: str = ""

    @staticmethod
    def parse(text: str) -> "OperatorName":
        name, _, overload = text.partition(".")
        if not re.fullmatch(r"\w+", name) or (overload and not re.fullmatch(r"\w+", overload)):
            raise ValueError(f"bad operator name {text!r}")
        return OperatorName(name, overload)

    def __str__(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def unambiguous(self) -> str:
        """A C identifier unique per overload: ``add_out``, ``sum_dim_IntList``."""
        return f"{self.name}_{self.overload}" if self.overload else self.name


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for c in text:
        depth += c in "([" and 1 or (c in ")]" and -1 or 0)
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


@dataclass(frozen=True)
class FunctionSchema:
    name: OperatorName
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]

    @staticmethod
    def parse(text: str) -> "FunctionSchema":
        m = re.fullmatch(r"([\w.]+)\((.*)\) -> (.+)", text.strip())
        if not m:
            raise ValueError(f"bad schema {text!r}: expected 'name(args) -> returns'")
        args, kwarg_only = [], False
        for part in _split_top_level(m.group(2)):
            if part == "*":
                kwarg_only = True
                continue
            args.append(Argument.parse(part, kwarg_only))
        ret = m.group(3).strip()
        if ret.startswith("(") and ret.endswith(")"):
            returns = tuple(Return.parse(r) for r in _split_top_level(ret[1:-1]))
            if len(returns) == 1:
                raise ValueError(f"bad schema {text!r}: a single return is written without parentheses")
        else:
            returns = (Return.parse(ret),)
        schema = FunctionSchema(OperatorName.parse(m.group(1)), tuple(args), returns)
        if str(schema) != text.strip():
            raise ValueError(f"schema {text!r} is not in canonical form; write it as {str(schema)!r}")
        return schema

    def __str__(self) -> str:
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        rets = ", ".join(str(r) for r in self.returns)
        if len(self.returns) != 1:
            rets = f"({rets})"
        return f"{self.name}({', '.join(parts)}) -> {rets}"

    # -- classification ------------------------------------------------------
    @property
    def is_out(self) -> bool:
        return any(a.is_write and a.kwarg_only for a in self.arguments)

    @property
    def is_inplace(self) -> bool:
        return self.name.name.endswith("_") and not self.is_out

    @property
    def out_arguments(self) -> list[Argument]:
        return [a for a in self.arguments if a.is_write and a.kwarg_only]

    @property
    def tensor_arguments(self) -> list[Argument]:
        return [a for a in self.arguments if a.type.is_tensor]

    @property
    def base_name(self) -> str:
        """``add`` for ``add``, ``add_`` and ``add.out``."""
        return self.name.name.rstrip("_") if self.is_inplace else self.name.name
