"""Operator registrations, kernel declarations and the typed C++ API."""

from __future__ import annotations

from collections import defaultdict

from . import cpp
from .yaml_io import NativeFunction

NAMESPACE = "tensorlet"
# Keys whose registrations live in libtensorlet; CUDA's go into libtensorlet_cuda.
CORE_KEYS = ("CPU", "Meta", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


def boxed_wrapper_name(kernel: str, nf: NativeFunction) -> str:
    return f"boxed_{nf.func.name.unambiguous}__{kernel}"


def boxed_wrapper(kernel: str, nf: NativeFunction) -> str:
    s = nf.func
    n = len(s.arguments)
    args = ", ".join(cpp.unbox(a.type, f"args[{i}]") for i, a in enumerate(s.arguments))
    lines = [f"void {boxed_wrapper_name(kernel, nf)}(const OperatorHandle&, DispatchKeySet, Stack* stack) {{"]
    lines.append(f"  IValue* args = stack->data() + stack->size() - {n};")
    if cpp.returns_type(s) == "void":
        lines += [f"  native::{kernel}({args});", f"  drop(stack, {n});"]
    else:
        lines += [f"  auto result = native::{kernel}({args});", f"  drop(stack, {n});",
                  "  stack->emplace_back(std::move(result));"]
    lines.append("}")
    return "\n".join(lines)


def gen_native_functions_h(entries: list[NativeFunction], banner: str) -> str:
    seen, decls = set(), []
    for nf in entries:
        for key, kernel in nf.kernels.items():
            sig = (kernel, cpp.kernel_signature_key(nf.func))
            if sig in seen:
                continue
            seen.add(sig)
            decls.append(f"{cpp.returns_type(nf.func)} {kernel}({cpp.kernel_params(nf.func)});")
    return f"""{banner}#pragma once
// Kernels named in the dispatch: entries of ops.yaml (hand-written, csrc/ops).
#include <optional>
#include <tuple>
#include <vector>

#include "core/Tensor.h"

namespace tensorlet::native {{

{chr(10).join(decls)}

}}  // namespace tensorlet::native
"""


def gen_register(entries: list[NativeFunction], keys: tuple[str, ...], banner: str, with_defs: bool) -> str:
    wrappers, blocks = [], []
    done = set()
    by_key: dict[str, list[str]] = defaultdict(list)
    for nf in entries:
        for key, kernel in nf.kernels.items():
            if key not in keys:
                continue
            name = boxed_wrapper_name(kernel, nf)
            if name not in done:
                done.add(name)
                wrappers.append(boxed_wrapper(kernel, nf))
            by_key[key].append(f'  m.impl("{nf.func.name}", &{name}, "{kernel}");')
    if with_defs:
        defs = [f'  m.def("{nf.func}");' for nf in entries]
        blocks.append(f"TENSORLET_LIBRARY({NAMESPACE}, m) {{\n" + "\n".join(defs) + "\n}")
    for key in keys:
        if by_key[key]:
            blocks.append(f"TENSORLET_LIBRARY_IMPL({NAMESPACE}, {key}, m) {{\n" + "\n".join(by_key[key]) + "\n}")
    return f"""{banner}#include "dispatch/Library.h"
#include "generated/NativeFunctions.h"

namespace tensorlet {{
namespace {{

{chr(10).join(chr(10) + w if i else w for i, w in enumerate(wrappers))}

}}  // namespace

{chr(10).join(chr(10) + b if i else b for i, b in enumerate(blocks))}

}}  // namespace tensorlet
"""


def _api_body(nf: NativeFunction) -> list[str]:
    s = nf.func
    push = "".join(f"  stack.emplace_back({a.name});\n" for a in s.arguments)
    ret = cpp.returns_type(s)
    tail = {"void": "", "Tensor": "  return std::move(stack.back().to_tensor_ref());\n"}.get(
        ret, "  return {" + ", ".join(f"stack[{i}].to_tensor()" for i in range(len(s.returns))) + "};\n")
    return [
        f"{ret} {cpp.api_name(s)}({cpp.api_params(s, with_defaults=False)}) {{",
        f'  static const OperatorHandle op = Dispatcher::singleton().find_or_throw("{NAMESPACE}::{s.name}");',
        "  Stack stack;",
        f"  stack.reserve({len(s.arguments)});",
        push.rstrip("\n"),
        "  Dispatcher::singleton().call(op, &stack);",
        tail.rstrip("\n") if tail else "",
        "}",
    ]


def gen_functions(entries: list[NativeFunction], banner: str) -> tuple[str, str]:
    decls, defs, named = [], [], set()
    for nf in entries:
        s = nf.func
        name = cpp.api_name(s)
        # Defaults only on the first overload of a name, so that calls such as
        # sum(x) stay unambiguous between sum() and sum.dim_IntList().
        decls.append(f"{cpp.returns_type(s)} {name}({cpp.api_params(s, with_defaults=name not in named)});")
        named.add(name)
        defs.append("\n".join(line for line in _api_body(nf) if line))
    header = f"""{banner}#pragma once
// The typed C++ API: one function per operator overload, each a call through the
// dispatcher. `tensorlet::add(a, b)` is what Python's tensorlet.add ends up calling.
#include <optional>
#include <tuple>
#include <vector>

#include "core/Tensor.h"

namespace tensorlet {{

{chr(10).join(decls)}

}}  // namespace tensorlet
"""
    source = f"""{banner}#include "generated/Functions.h"

#include "dispatch/Dispatcher.h"

namespace tensorlet {{

{(chr(10) * 2).join(defs)}

}}  // namespace tensorlet
"""
    return header, source
