"""Autograd nodes (one per derivatives.yaml entry) and the kernels registered for
the Autograd dispatch key."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import cpp
from .model import FunctionSchema
from .yaml_io import DerivativeInfo, NativeFunction

# `<arg>.sizes()` and friends save only metadata, not the tensor.
METADATA = {"sizes": "std::vector<int64_t>", "scalar_type": "ScalarType", "device": "Device"}


@dataclass
class NodeSpec:
    info: DerivativeInfo
    class_name: str
    inputs: list[str]                      # differentiable inputs, schema order
    formulas: dict[str, str]               # input -> C++ expression (rewritten)
    saved_tensors: list[str] = field(default_factory=list)       # SavedVariable <name>_
    saved_values: list[tuple[str, str]] = field(default_factory=list)  # (C++ type, member)
    saved_metadata: list[tuple[str, str, str]] = field(default_factory=list)  # (type, member, init)
    uses_result: bool = False


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


def analyze(info: DerivativeInfo, index: int) -> NodeSpec:
    s = info.name
    args = {a.name: a for a in s.arguments}
    formulas = dict(info.formulas)
    inputs = [a.name for a in s.arguments if a.name in formulas]
    for name in inputs:
        if not args[name].type.is_tensor:
            raise ValueError(f"{s}: formula given for non-tensor argument {name!r}")
    spec = NodeSpec(info, f"{_camel(s.name.name)}Backward{index}", inputs, {})
    meta_seen, tensors_seen, values_seen = set(), set(), set()
    for name, text in formulas.items():
        def meta(m: re.Match) -> str:
            arg, what = m.group(1), m.group(2)
            if arg not in args:
                raise ValueError(f"{s}: formula for {name} uses unknown argument {arg!r}")
            member = f"{arg}_{what}"
            if member not in meta_seen:
                meta_seen.add(member)
                spec.saved_metadata.append((METADATA[what], member, f"{arg}.{what}()"))
            return member
        text = re.sub(r"\b(\w+)\.(" + "|".join(METADATA) + r")\(\)", meta, text)
        for ident in re.findall(r"(?<![\w.:])([A-Za-z_]\w*)\b(?!\s*\()", text):
            if ident == "result":
                spec.uses_result = True
            elif ident in args and args[ident].type.is_tensor:
                if ident not in tensors_seen:
                    tensors_seen.add(ident)
                    spec.saved_tensors.append(ident)
            elif ident in args and ident not in values_seen:
                values_seen.add(ident)
                spec.saved_values.append((cpp.value_type(args[ident].type), ident))
        spec.formulas[name] = text
    return spec


def gen_node(spec: NodeSpec) -> str:
    members = [f"  SavedVariable {t}_;" for t in spec.saved_tensors]
    members += [f"  {t} {m};" for t, m, _ in spec.saved_metadata]
    members += [f"  {t} {m};" for t, m in spec.saved_values]
    if spec.uses_result:
        members.append("  SavedVariable result_;")
    unpack = [f"    Tensor {t} = {t}_.unpack(\"{t}\");" for t in spec.saved_tensors]
    if spec.uses_result:
        unpack.append('    Tensor result = result_.unpack("result");')
    body = [f"    if (should_compute_output({i})) grad_inputs[{i}] = {spec.formulas[n]};"
            for i, n in enumerate(spec.inputs)]
    release = [f"    {t}_.reset();" for t in spec.saved_tensors] + (["    result_.reset();"] if spec.uses_result else [])
    return f"""struct {spec.class_name} final : Node {{
  std::string name() const override {{ return "{spec.class_name}"; }}
  variable_list apply(variable_list&& grads) override {{
    const Tensor& grad = grads[0];
    variable_list grad_inputs({len(spec.inputs)});
{chr(10).join(unpack + body)}
    return grad_inputs;
  }}
  void release_variables() override {{
{chr(10).join(release) if release else "    // nothing saved"}
  }}
{chr(10).join(members)}
}};"""


def _locals(s: FunctionSchema) -> list[str]:
    return [f"  {cpp.value_type(a.type)} {a.name} = {cpp.unbox(a.type, f'args[{i}]')};"
            for i, a in enumerate(s.arguments)]


def _call_below(s: FunctionSchema) -> str:
    args = ", ".join(a.name for a in cpp.api_arguments(s))
    return f"tensorlet::{cpp.api_name(s)}({args})"


def gen_kernel(spec: NodeSpec) -> str:
    s = spec.info.name
    n = len(s.arguments)
    inplace = s.is_inplace
    ptrs = ", ".join(f"&{i}" for i in spec.inputs)
    save_before = []
    for t in spec.saved_tensors:
        if inplace and t == "self":
            # The op overwrites self: keep its old value for the formulas.
            save_before.append(f"    node->{t}_ = SavedVariable(tensorlet::clone(self), false);")
        else:
            save_before.append(f"    node->{t}_ = SavedVariable({t}, false);")
    save_before += [f"    node->{m} = {init};" for _, m, init in spec.saved_metadata]
    save_before += [f"    node->{m} = {m};" for _, m in spec.saved_values]
    after = ["    rebase_history(self, node);" if inplace else "    set_history(result, node);"]
    if spec.uses_result:
        after.append("    node->result_ = SavedVariable(result, true);")
    lines = [f"void autograd_{s.name.unambiguous}(const OperatorHandle&, DispatchKeySet, Stack* stack) {{",
             f"  IValue* args = stack->data() + stack->size() - {n};", *_locals(s), f"  drop(stack, {n});",
             f"  std::shared_ptr<{spec.class_name}> node;",
             f"  if (compute_requires_grad({{{ptrs}}})) {{",
             f"    node = std::make_shared<{spec.class_name}>();",
             f"    node->set_inputs({{{ptrs}}});",
             *save_before, "  }"]
    if inplace:
        lines.append("  check_inplace(self, node != nullptr);")
    lines += ["  Tensor result;", "  {", "    ExcludeDispatchKeyGuard below_autograd(DispatchKeySet(DispatchKey::Autograd));",
              f"    result = {_call_below(s)};", "  }", "  if (node) {", *after, "  }",
              "  stack->emplace_back(std::move(result));", "}"]
    return "\n".join(lines)


def check_coverage(ops: list[NativeFunction], derivatives: list[DerivativeInfo]) -> None:
    have = {str(d.name.name) for d in derivatives}
    by_name = {str(nf.func.name): nf for nf in ops}
    for d in derivatives:
        nf = by_name.get(str(d.name.name))
        if nf is None:
            raise ValueError(f"derivatives.yaml: {d.name.name} is not in ops.yaml")
        if str(nf.func) != str(d.name):
            raise ValueError(f"derivatives.yaml: schema of {d.name.name} differs from ops.yaml:\n  {d.name}\n  {nf.func}")
    missing = [str(nf.func.name) for nf in ops
               if not nf.is_composite_implicit and not nf.func.is_out and nf.func.tensor_arguments
               and str(nf.func.name) not in have]
    if missing:
        raise ValueError("derivatives.yaml has no entry for: " + ", ".join(missing) +
                         " (add formulas, or `output_differentiability: [False]`)")


def gen_autograd(ops: list[NativeFunction], derivatives: list[DerivativeInfo], banner: str) -> str:
    check_coverage(ops, derivatives)
    nodes, kernels, regs, counts = [], [], [], {}
    for d in derivatives:
        s = d.name
        if not d.differentiable:
            regs.append(f'  m.impl("{s.name}", &autograd_not_differentiable, "autograd_not_differentiable");')
            continue
        idx = counts.get(s.name.name.rstrip("_"), 0)
        counts[s.name.name.rstrip("_")] = idx + 1
        spec = analyze(d, idx)
        nodes.append(gen_node(spec))
        kernels.append(gen_kernel(spec))
        regs.append(f'  m.impl("{s.name}", &autograd_{s.name.unambiguous}, "{spec.class_name}");')
    for nf in ops:
        if nf.func.is_out:
            regs.append(f'  m.impl("{nf.func.name}", &autograd_out_unsupported, "autograd_out_unsupported");')
    return f"""{banner}#include "autograd/Autograd.h"
#include "dispatch/Dispatcher.h"
#include "autograd/FunctionsManual.h"
#include "dispatch/Library.h"
#include "generated/Functions.h"

namespace tensorlet {{
namespace {{

{(chr(10) * 2).join(nodes)}

{(chr(10) * 2).join(kernels)}

}}  // namespace

TENSORLET_LIBRARY_IMPL(tensorlet, Autograd, m) {{
{chr(10).join(regs)}
}}

}}  // namespace tensorlet
"""
