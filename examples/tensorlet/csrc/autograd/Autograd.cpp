#include "autograd/Autograd.h"

#include <atomic>
#include <queue>
#include <unordered_map>

#include "dispatch/Dispatcher.h"
#include "dispatch/Library.h"
#include "generated/Functions.h"

namespace tensorlet {

namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}

Node::Node() : sequence_nr_(g_next_sequence_nr++) {}

void Node::set_inputs(std::initializer_list<const Tensor*> inputs) {
  next_edges_.clear();
  input_metadata_.clear();
  for (const Tensor* t : inputs) {
    next_edges_.push_back(t->defined() ? gradient_edge(*t) : Edge{});
    input_metadata_.push_back(t->defined() ? InputMetadata{t->dtype(), t->sizes()} : InputMetadata{});
  }
}

// ---- tensor-side state ------------------------------------------------------

AutogradMeta* autograd_meta(const Tensor& t) { return static_cast<AutogradMeta*>(t.impl()->autograd_meta()); }

AutogradMeta& materialize_autograd_meta(const Tensor& t) {
  if (!t.impl()->autograd_meta()) t.impl()->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *autograd_meta(t);
}

void set_requires_grad(const Tensor& t, bool requires_grad) {
  AutogradMeta* meta = autograd_meta(t);
  if (meta && meta->grad_fn) {
    TL_CHECK(requires_grad, "you can only change requires_grad flags of leaf variables. If you want to use a "
                            "computed variable in a subgraph that doesn't require differentiation use "
                            "var_no_grad = var.detach().");
    return;
  }
  TL_CHECK(!requires_grad || is_floating_type(t.dtype()),
           "only Tensors of floating point dtype can require gradients (got ", scalar_type_name(t.dtype()), ")");
  materialize_autograd_meta(t).requires_grad_flag = requires_grad;
}

std::shared_ptr<Node> grad_fn(const Tensor& t) {
  AutogradMeta* m = autograd_meta(t);
  return m ? m->grad_fn : nullptr;
}

bool is_leaf(const Tensor& t) { return grad_fn(t) == nullptr; }

Tensor grad(const Tensor& t) {
  AutogradMeta* m = autograd_meta(t);
  return m ? m->grad : Tensor();
}

void set_grad(const Tensor& t, const Tensor& g) {
  if (g.defined()) {
    TL_CHECK(g.sizes() == t.sizes(), "assigned grad has data of a different size: ", shape_str(g.sizes()), " vs ",
             shape_str(t.sizes()));
  }
  materialize_autograd_meta(t).grad = g;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = autograd_meta(t);
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (!m->requires_grad_flag) return {};
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

bool compute_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

void set_history(const Tensor& result, const std::shared_ptr<Node>& node) {
  if (!is_floating_type(result.dtype())) return;  // integer outputs are never differentiable
  AutogradMeta& m = materialize_autograd_meta(result);
  m.grad_fn = node;
  m.output_nr = 0;
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& node) { set_history(self, node); }

void check_inplace(const Tensor& self, bool records_history) {
  if (!GradMode::is_enabled()) return;
  if (self.requires_grad() && is_leaf(self))
    throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
  if (records_history && self.impl()->is_view())
    throw NotImplementedError(
        "tensorlet autograd does not support in-place operations on views that take part in autograd; "
        "clone() the view first");
}

// ---- saved variables ------------------------------------------------------------

SavedVariable::SavedVariable(const Tensor& t, bool /*is_output*/) {
  if (!t.defined()) return;
  auto impl = make_intrusive<TensorImpl>(t.impl()->storage(), t.dtype(), t.sizes(), t.strides(), t.storage_offset());
  impl->share_version_counter(*t.impl());
  data_ = Tensor(std::move(impl));
  saved_version_ = t.impl()->version();
}

Tensor SavedVariable::unpack(const char* name) const {
  if (released_)
    throw Error(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward(). "
        "Specify retain_graph=True if you need to backward through the graph a second time.");
  if (data_.defined() && data_.impl()->version() != saved_version_)
    throw Error(detail::str_cat(
        "one of the variables needed for gradient computation has been modified by an inplace operation: saved "
        "tensor '", name, "' (", data_.describe(), ") is at version ", data_.impl()->version(), "; expected version ",
        saved_version_, " instead."));
  return data_;
}

// ---- AccumulateGrad ---------------------------------------------------------------

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor leaf(variable_);
  AutogradMeta& m = materialize_autograd_meta(leaf);
  const Tensor& g = grads[0];
  // clone: the incoming gradient may alias another node's buffer
  m.grad = m.grad.defined() ? tensorlet::add(m.grad, g) : tensorlet::clone(g);
  return {};
}

// ---- engine ------------------------------------------------------------------------

namespace {

struct ReadyOrder {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

Tensor validate_gradient(const Node& node, size_t i, Tensor g) {
  const InputMetadata& meta = node.input_metadata()[i];
  TL_CHECK(g.sizes() == meta.sizes, "Function ", node.name(), " returned an invalid gradient at index ", i, " - got ",
           shape_str(g.sizes()), " but expected shape compatible with ", shape_str(meta.sizes));
  if (g.dtype() != meta.dtype) g = tensorlet::_to_copy(g, meta.dtype, std::nullopt);
  return g;
}

}  // namespace

void run_backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs, bool retain_graph) {
  AutoGradMode no_grad(false);  // no double backward: formulas run without recording
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, Tensor> buffers;
  std::vector<std::shared_ptr<Node>> roots;

  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    Edge edge = gradient_edge(out);
    TL_CHECK(edge.valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : Tensor();
    if (!g.defined()) {
      TL_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      g = tensorlet::ones_like(out, std::nullopt);
    }
    TL_CHECK(g.sizes() == out.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ", shape_str(g.sizes()),
             " and output[", i, "] has a shape of ", shape_str(out.sizes()));
    Tensor& buf = buffers[edge.function.get()];
    buf = buf.defined() ? tensorlet::add(buf, g) : g;
    roots.push_back(edge.function);
  }

  // Count, for every reachable node, how many edges lead into it.
  std::vector<Node*> stack;
  std::unordered_map<Node*, bool> seen;
  for (auto& r : roots)
    if (!seen[r.get()]) {
      seen[r.get()] = true;
      stack.push_back(r.get());
    }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      dependencies[e.function.get()]++;
      if (!seen[e.function.get()]) {
        seen[e.function.get()] = true;
        stack.push_back(e.function.get());
      }
    }
  }

  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (auto& r : roots)
    if (dependencies[r.get()] == 0 && seen[r.get()]) {
      ready.push(r.get());
      seen[r.get()] = false;  // queue each root once
    }
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    Tensor g = std::move(buffers[node]);
    buffers.erase(node);
    variable_list grads;
    try {
      grads = node->apply({g});
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + " [in " + node->name() + "]");
    }
    if (!retain_graph) node->release_variables();
    const auto& edges = node->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      Node* next = e.function.get();
      if (i < grads.size() && grads[i].defined()) {
        Tensor gi = validate_gradient(*node, i, grads[i]);
        Tensor& buf = buffers[next];
        buf = buf.defined() ? tensorlet::add(buf, gi) : gi;
      }
      if (--dependencies[next] == 0) {
        if (buffers.count(next)) ready.push(next);
        else buffers.erase(next);  // no gradient flowed into it
      }
    }
  }
}

// Ops without a derivatives.yaml formula never make outputs that require grad;
// out= variants refuse inputs that require grad, as in PyTorch.
void autograd_not_differentiable(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  ExcludeDispatchKeyGuard below(DispatchKeySet(DispatchKey::Autograd));
  Dispatcher::singleton().redispatch(op, keys & DispatchKeySet::below(DispatchKey::Autograd), stack);
}

void autograd_out_unsupported(const OperatorHandle& op, DispatchKeySet, Stack*) {
  throw Error(op.schema().name + "(): functions with out=... arguments don't support automatic differentiation, "
                                 "but one of the arguments requires grad.");
}

// An op that reached the Autograd key without an autograd kernel (an extension
// op, say) would silently drop gradients; say so instead.
void autograd_missing_formula(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  throw NotImplementedError("no derivative formula for op " + op.name() +
                            " (one of its inputs requires grad); add it to derivatives.yaml or call it under "
                            "no_grad()");
}

TENSORLET_LIBRARY_FALLBACK(Autograd, m) { m.fallback(&autograd_missing_formula); }

}  // namespace tensorlet
