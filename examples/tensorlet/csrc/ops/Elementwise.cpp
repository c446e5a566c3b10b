// Shapes, dtypes and outputs of the elementwise ops, computed once for every backend
// (binary_iteration, unary_iteration, where_iteration); the kernels that run loops over
// them are in ops/cpu (CPU and Meta) and ops/cuda.
#include "ops/Elementwise.h"

#include "generated/Functions.h"
#include "ops/TensorIterator.h"

namespace tensorlet {
namespace {

// An operand in the compute dtype on the iteration's device.
Tensor iteration_operand(const Tensor& t, ScalarType compute, Device device, const std::vector<int64_t>& shape) {
  Tensor c = cast_to(t, compute);
  if (c.device().type != device.type) c = tensorlet::_to_copy(c, compute, device);
  return expand_view(c, shape);
}

// The one out= path of the elementwise ops: an out= / in-place tensor checked (device,
// shape, castability) and resized when empty, or a new result; and the loop's target.
ElementwiseOutput elementwise_output(Tensor out, const std::vector<int64_t>& shape, ScalarType result, Device device,
                                     const char* name) {
  if (out.defined()) prepare_out(out, shape, result, device, name);
  else out = empty_tensor(shape, result, device);
  Tensor target = out.dtype() == result ? out : empty_tensor(shape, result, device);
  return {std::move(out), std::move(target)};
}

}  // namespace

Tensor ElementwiseOutput::finish() const {
  if (!target.is_same(out)) tensorlet::copy_(out, target, false);
  return out;
}

bool is_comparison(BinaryOp op) { return op == BinaryOp::Eq || op == BinaryOp::Lt || op == BinaryOp::Gt; }

const char* binary_name(BinaryOp op) {
  switch (op) {
#define TL_NAME(name, Enum) \
  case BinaryOp::Enum: return #name;
    TL_FORALL_ARITHMETIC_OPS(TL_NAME) TL_FORALL_COMPARISON_OPS(TL_NAME)
#undef TL_NAME
  }
  return "?";
}

BinaryIteration binary_iteration(BinaryOp op, const Tensor& self, const Tensor& other, const Scalar& alpha,
                                 Tensor out) {
  const char* name = binary_name(op);
  ScalarType compute = result_type({&self, &other});
  if (op == BinaryOp::Div && !is_floating_type(compute)) compute = kDefaultFloat;  // true division
  // torch's refusals: subtraction with any bool operand (a bool mask minus a number is
  // almost always a mistake for `~mask`), and an alpha the result type can't represent.
  if (op == BinaryOp::Sub) {
    TL_CHECK(!(self.dtype() == ScalarType::Bool && other.dtype() == ScalarType::Bool),
             "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
             "`logical_xor()` operator instead.");
    TL_CHECK(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool,
             "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert "
             "a mask, use the `~` or `logical_not()` operator instead.");
  }
  TL_CHECK(!alpha.is_bool() || compute == ScalarType::Bool, "Boolean alpha only supported for Boolean results.");
  TL_CHECK(is_floating_type(compute) || !alpha.is_floating_point(),
           "For integral input tensors, argument alpha must not be a floating point number.");
  const ScalarType result = is_comparison(op) ? ScalarType::Bool : compute;
  const auto shape = broadcast_shapes(self.sizes(), other.sizes());
  const Device device = common_device({&self, &other});
  if (out.defined() && out.is_same(self)) {  // in-place: self can't grow to the broadcast shape
    TL_CHECK(shape == self.sizes(), "output with shape ", shape_str(self.sizes()),
             " doesn't match the broadcast shape ", shape_str(shape));
  }
  BinaryIteration it{elementwise_output(std::move(out), shape, result, device, name)};
  it.compute = compute;
  if (device.is_meta()) return it;
  it.a = iteration_operand(self, compute, device, shape);
  it.b = iteration_operand(other, compute, device, shape);
  return it;
}

const char* unary_name(UnaryOp op) {
  switch (op) {
#define TL_NAME(name, Enum, promotes) \
  case UnaryOp::Enum: return #name;
    TL_FORALL_UNARY_OPS(TL_NAME)
#undef TL_NAME
  }
  return "?";
}

namespace {
bool unary_promotes(UnaryOp op) {
  switch (op) {
#define TL_PROMOTES(name, Enum, promotes) \
  case UnaryOp::Enum: return promotes;
    TL_FORALL_UNARY_OPS(TL_PROMOTES)
#undef TL_PROMOTES
  }
  return false;
}
}  // namespace

UnaryIteration unary_iteration(UnaryOp op, const Tensor& self, Tensor out) {
  const char* name = unary_name(op);
  ScalarType compute = self.dtype();
  if (unary_promotes(op) && !is_floating_type(compute)) compute = kDefaultFloat;
  TL_CHECK(!(op == UnaryOp::Neg && compute == ScalarType::Bool),
           "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
           "use the `~` or `logical_not()` operator instead.");
  TL_CHECK(!(op == UnaryOp::Relu && compute == ScalarType::Bool), "Boolean inputs not supported for relu");
  TL_CHECK(!(op == UnaryOp::Abs && compute == ScalarType::Bool), name, ": not implemented for 'bool'");
  // As torch: an op that keeps its input's dtype (neg, abs, sign, relu) writes only into an
  // out= of that dtype; the ones that promote to float cast into out= (ElementwiseOutput).
  TL_CHECK(!out.defined() || unary_promotes(op) || out.dtype() == compute, name, ": Found dtype ",
           scalar_type_name(out.dtype()), " but expected ", scalar_type_name(compute), " (the dtype of out=)");
  UnaryIteration it{elementwise_output(std::move(out), self.sizes(), compute, self.device(), name)};
  it.compute = compute;
  if (!self.device().is_meta()) it.a = cast_to(self, compute);
  return it;
}

WhereIteration where_iteration(const Tensor& condition, const Tensor& self, const Tensor& other) {
  TL_CHECK(condition.dtype() == ScalarType::Bool, "where expected condition to be a boolean tensor, but got a "
                                                  "tensor with dtype ", scalar_type_name(condition.dtype()));
  const ScalarType result = result_type({&self, &other});
  const auto shape = broadcast_shapes(condition.sizes(), broadcast_shapes(self.sizes(), other.sizes()));
  const Device device = common_device({&condition, &self, &other});
  WhereIteration it;
  it.out = empty_tensor(shape, result, device);
  if (device.is_meta()) return it;
  it.condition = iteration_operand(condition, ScalarType::Bool, device, shape);
  it.a = iteration_operand(self, result, device, shape);
  it.b = iteration_operand(other, result, device, shape);
  return it;
}

}  // namespace tensorlet
