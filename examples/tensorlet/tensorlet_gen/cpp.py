"""How schema types map onto C++: argument types, IValue unboxing, defaults."""

from __future__ import annotations

from .model import Argument, FunctionSchema, Type

_VALUE = {"Tensor": "Tensor", "Scalar": "Scalar", "float": "double", "int": "int64_t", "bool": "bool",
          "ScalarType": "ScalarType", "Device": "Device"}
_UNBOX = {"Tensor": "tensor", "Scalar": "scalar", "float": "double", "int": "int", "bool": "bool",
          "ScalarType": "scalar_type", "Device": "device"}
_BY_REFERENCE = {"Tensor", "Scalar"}


def value_type(t: Type) -> str:
    """The C++ type holding a value of `t` (what a saved field is declared as)."""
    base = "std::vector<int64_t>" if t.is_list else _VALUE[t.base]
    return f"std::optional<{base}>" if t.optional else base


def param_type(t: Type) -> str:
    v = value_type(t)
    return f"const {v}&" if (t.is_list or t.optional or t.base in _BY_REFERENCE) else v


def unbox(t: Type, expr: str) -> str:
    name = "int_list" if t.is_list else _UNBOX[t.base]
    return f"{expr}.to_{'optional_' if t.optional else ''}{name}()"


def default_value(a: Argument) -> str:
    d = a.default
    if d == "None":
        return "std::nullopt"
    if d in ("True", "False"):
        return d.lower()
    if a.type.is_list:
        inner = d.strip("[]")
        return f"std::vector<int64_t>{{{inner}}}"
    if a.type.base == "ScalarType":
        return f"scalar_type_from_name(\"{d}\")"
    return d


def returns_type(s: FunctionSchema) -> str:
    if len(s.returns) == 0:
        return "void"
    if len(s.returns) == 1:
        return "Tensor"
    return f"std::tuple<{', '.join('Tensor' for _ in s.returns)}>"


def api_name(s: FunctionSchema) -> str:
    """Name of the typed C++ function: ``add``, ``add_``, ``add_out``."""
    return f"{s.name.name}_out" if s.is_out else s.name.name


def api_arguments(s: FunctionSchema) -> list[Argument]:
    """Argument order of the typed API: out= arguments first, as in PyTorch."""
    if s.is_out:
        return s.out_arguments + [a for a in s.arguments if a not in s.out_arguments]
    return list(s.arguments)


def api_params(s: FunctionSchema, with_defaults: bool) -> str:
    args = api_arguments(s)
    parts = []
    # C++ defaults must be trailing: only the suffix of defaulted arguments keeps them.
    first_default = len(args)
    while with_defaults and first_default > 0 and args[first_default - 1].default is not None:
        first_default -= 1
    for i, a in enumerate(args):
        p = f"{param_type(a.type)} {cpp_name(a.name)}"
        if with_defaults and i >= first_default:
            p += f" = {default_value(a)}"
        parts.append(p)
    return ", ".join(parts)


def kernel_params(s: FunctionSchema) -> str:
    return ", ".join(f"{param_type(a.type)} {cpp_name(a.name)}" for a in s.arguments)


def kernel_signature_key(s: FunctionSchema) -> str:
    return f"{returns_type(s)}({', '.join(param_type(a.type) for a in s.arguments)})"


_RESERVED = {"out", "default", "int", "float", "bool"}


def cpp_name(name: str) -> str:
    return name
