"""CPython bindings: one C function per Python-visible name, trying each overload
(including the out= form) with the runtime argument parser."""

from __future__ import annotations

from collections import OrderedDict

from . import cpp
from .model import FunctionSchema
from .yaml_io import NativeFunction

_PARSED = {"Tensor": "tensor", "Scalar": "scalar", "float": "to_double", "int": "to_int", "bool": "to_bool",
           "ScalarType": "scalar_type", "Device": "device"}


def _accessor(a, i: int) -> str:
    name = "int_list" if a.type.is_list else _PARSED[a.type.base]
    return f"r.{'optional_' if a.type.optional else ''}{name}({i})"


def _case(idx: int, s: FunctionSchema) -> str:
    index = {a.name: i for i, a in enumerate(s.arguments)}
    locals_ = [f"      auto {a.name} = {_accessor(a, index[a.name])};" for a in s.arguments]
    call = f"tensorlet::{cpp.api_name(s)}({', '.join(a.name for a in cpp.api_arguments(s))})"
    if cpp.returns_type(s) == "void":
        run = [f"      {{ GilRelease no_gil; {call}; }}", "      Py_RETURN_NONE;"]
    else:
        run = [f"      {cpp.returns_type(s)} result;", f"      {{ GilRelease no_gil; result = {call}; }}",
               "      return wrap(std::move(result));"]
    return "\n".join([f"    case {idx}: {{", *locals_, *run, "    }"])


def _function(py_name: str, schemas: list[FunctionSchema], method: bool) -> tuple[str, str]:
    cname = f"{'method' if method else 'function'}_{py_name}"
    sigs = ",\n".join(f'      "{s}"' for s in schemas)
    cases = "\n".join(_case(i, s) for i, s in enumerate(schemas))
    body = f"""static PyObject* {cname}(PyObject* self_, PyObject* args, PyObject* kwargs) {{
  TL_PY_BEGIN
  static PythonArgParser parser("{py_name}", {{
{sigs}
  }}, /*is_method=*/{'true' if method else 'false'});
  ParsedArgs r;
  switch (parser.parse(self_, args, kwargs, r)) {{
{cases}
  }}
  Py_RETURN_NONE;
  TL_PY_END
}}"""
    return cname, body


def gen_python(entries: list[NativeFunction], banner: str) -> str:
    functions: "OrderedDict[str, list[FunctionSchema]]" = OrderedDict()
    methods: "OrderedDict[str, list[FunctionSchema]]" = OrderedDict()
    for nf in entries:
        s = nf.func
        if "function" in nf.variants:
            functions.setdefault(s.name.name, []).append(s)
        if "method" in nf.variants and not s.is_out:
            methods.setdefault(s.name.name, []).append(s)
    # out= forms ride on the function of the same name.
    for nf in entries:
        if nf.func.is_out and nf.func.name.name in functions and nf.func not in functions[nf.func.name.name]:
            functions[nf.func.name.name].append(nf.func)
    bodies, fn_table, method_table = [], [], []
    for name, schemas in functions.items():
        cname, body = _function(name, schemas, method=False)
        bodies.append(body)
        fn_table.append(f'    {{"{name}", (PyCFunction)(void (*)()){cname}, METH_VARARGS | METH_KEYWORDS, nullptr}},')
    for name, schemas in methods.items():
        cname, body = _function(name, schemas, method=True)
        bodies.append(body)
        method_table.append(f'    {{"{name}", (PyCFunction)(void (*)()){cname}, METH_VARARGS | METH_KEYWORDS, nullptr}},')
    return f"""{banner}#include "python/PythonBindings.h"
#include "generated/Functions.h"

namespace tensorlet::python {{
namespace {{

{(chr(10) * 2).join(bodies)}

PyMethodDef g_functions[] = {{
{chr(10).join(fn_table)}
    {{nullptr, nullptr, 0, nullptr}},
}};

PyMethodDef g_methods[] = {{
{chr(10).join(method_table)}
    {{nullptr, nullptr, 0, nullptr}},
}};

}}  // namespace

PyMethodDef* generated_functions() {{ return g_functions; }}
PyMethodDef* generated_methods() {{ return g_methods; }}

}}  // namespace tensorlet::python
"""
