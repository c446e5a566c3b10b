#pragma once
// Reverse-mode autograd: the graph (Node, Edge), what a tensor knows about its
// place in it (AutogradMeta), saved tensors with version checks, and the engine.
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/Tensor.h"
#include "autograd/GradMode.h"
#include "dispatch/Dispatcher.h"

namespace tensorlet {

class Node;
using variable_list = std::vector<Tensor>;

struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

// What the engine checks a produced gradient against.
struct InputMetadata {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  virtual std::string name() const = 0;
  // Gradients of the forward outputs in, gradients of the forward inputs out.
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual void release_variables() {}

  // Records an edge (and the metadata) for each differentiable forward input.
  void set_inputs(std::initializer_list<const Tensor*> inputs);
  void set_next_edges(std::vector<Edge> edges) { next_edges_ = std::move(edges); }
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const std::vector<InputMetadata>& input_metadata() const { return input_metadata_; }
  bool should_compute_output(size_t i) const { return i < next_edges_.size() && next_edges_[i].valid(); }
  // Later nodes run first when several are ready (PyTorch's ordering).
  uint64_t sequence_nr() const { return sequence_nr_; }

 private:
  uint64_t sequence_nr_;
  std::vector<Edge> next_edges_;
  std::vector<InputMetadata> input_metadata_;
};

// Sink of the graph for a leaf tensor: adds the incoming gradient to .grad.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(intrusive_ptr<TensorImpl> variable) : variable_(std::move(variable)) {}
  std::string name() const override { return "AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override;
  const intrusive_ptr<TensorImpl>& variable() const { return variable_; }

 private:
  intrusive_ptr<TensorImpl> variable_;
};

struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad_flag = false;  // set by the user on leaves
  Tensor grad;
  std::shared_ptr<Node> grad_fn;    // null for leaves
  std::weak_ptr<Node> grad_accumulator;
  uint32_t output_nr = 0;
  bool requires_grad() const override { return requires_grad_flag || grad_fn != nullptr; }
};

AutogradMeta* autograd_meta(const Tensor& t);       // may be null
AutogradMeta& materialize_autograd_meta(const Tensor& t);
void set_requires_grad(const Tensor& t, bool requires_grad);
std::shared_ptr<Node> grad_fn(const Tensor& t);
bool is_leaf(const Tensor& t);
Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& grad);
Edge gradient_edge(const Tensor& t);

// Helpers used by the generated Autograd kernels.
bool compute_requires_grad(std::initializer_list<const Tensor*> inputs);
void set_history(const Tensor& result, const std::shared_ptr<Node>& node);
void rebase_history(const Tensor& self, const std::shared_ptr<Node>& node);
void check_inplace(const Tensor& self, bool records_history);

// A tensor kept for backward. It stores a shallow copy (same storage and version
// counter, no autograd metadata, so no reference cycle through grad_fn) and the
// version at save time; unpack() refuses stale data.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  Tensor unpack(const char* name) const;
  void reset() {
    data_ = Tensor();
    released_ = true;
  }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  bool released_ = false;
};

// Computes gradients of `outputs` and accumulates them into the leaves' .grad.
void run_backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs, bool retain_graph);

}  // namespace tensorlet

namespace tensorlet {
// Registered by the generated Autograd kernels for ops without formulas.
void autograd_not_differentiable(const OperatorHandle& op, DispatchKeySet keys, Stack* stack);
void autograd_out_unsupported(const OperatorHandle& op, DispatchKeySet keys, Stack* stack);
}  // namespace tensorlet
