// Shapes, dtypes and output allocation for the elementwise ops, computed once for
// every backend (binary_iteration); the CPU and Meta kernels here, CUDA's in ops/cuda.
#include "ops/Elementwise.h"

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/TensorIterator.h"

namespace tensorlet {
namespace {

bool is_comparison(BinaryOp op) { return op == BinaryOp::Eq || op == BinaryOp::Lt || op == BinaryOp::Gt; }

// An operand in the compute dtype on the iteration's device.
Tensor iteration_operand(const Tensor& t, ScalarType compute, Device device, const std::vector<int64_t>& shape) {
  Tensor c = cast_to(t, compute);
  if (c.device().type != device.type) c = tensorlet::_to_copy(c, compute, device);
  return expand_view(c, shape);
}

}  // namespace

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
    TL_CHECK_TYPE(!(self.dtype() == ScalarType::Bool && other.dtype() == ScalarType::Bool),
                  "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                  "`logical_xor()` operator instead.");
    TL_CHECK_TYPE(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool,
                  "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert "
                  "a mask, use the `~` or `logical_not()` operator instead.");
  }
  TL_CHECK_TYPE(!alpha.is_bool() || compute == ScalarType::Bool, "Boolean alpha only supported for Boolean results.");
  TL_CHECK_TYPE(is_floating_type(compute) || !alpha.is_floating_point(),
                "For integral input tensors, argument alpha must not be a floating point number.");
  const ScalarType result = is_comparison(op) ? ScalarType::Bool : compute;
  const auto shape = broadcast_shapes(self.sizes(), other.sizes());
  const Device device = common_device({&self, &other});
  if (out.defined() && out.is_same(self)) {  // in-place: self can't grow to the broadcast shape
    TL_CHECK(shape == self.sizes(), "output with shape ", shape_str(self.sizes()),
             " doesn't match the broadcast shape ", shape_str(shape));
  }
  if (out.defined()) {
    TL_CHECK(out.device().type == device.type, name, ": the out= tensor is on ", out.device().str(),
             " but the inputs are on ", device.str());
    prepare_out(out, shape, result, name);
  } else {
    out = empty_tensor(shape, result, device);
  }
  BinaryIteration it;
  it.compute = compute;
  it.out = out;
  it.target = out.dtype() == result ? out : empty_tensor(shape, result, device);
  if (device.is_meta()) return it;
  it.a = iteration_operand(self, compute, device, shape);
  it.b = iteration_operand(other, compute, device, shape);
  return it;
}

}  // namespace tensorlet

namespace tensorlet::native {
namespace {

// Writes op(self, other) into `out` (allocated when undefined) and returns it.
Tensor binary(BinaryOp op, const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
  // The common case first: two CPU float tensors of one dtype and shape, a new
  // result. Nothing to promote, broadcast or cast, so none of the work below.
  if (!out.defined() && !alpha.is_bool() && self.dtype() == other.dtype() && is_floating_type(self.dtype()) &&
      self.device().is_cpu() && other.device().is_cpu() && self.sizes() == other.sizes()) {
    out = empty_tensor(self.sizes(), is_comparison(op) ? ScalarType::Bool : self.dtype(), self.device());
    cpu::binary_kernel(op, out, self, other, alpha);
    return out;
  }
  BinaryIteration it = binary_iteration(op, self, other, alpha, std::move(out));
  const Device device = it.out.device();
  if (device.is_meta()) return it.out;
  TL_CHECK(device.is_cpu(), binary_name(op), ": no CPU kernel for device ", device.str());
  cpu::binary_kernel(op, it.target, it.a, it.b, alpha);
  if (!it.target.is_same(it.out)) cpu::copy_kernel(it.out, it.target);
  return it.out;
}

Tensor binary_inplace(BinaryOp op, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binary(op, self, other, alpha, self);
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

bool unary_promotes(UnaryOp op) {
  switch (op) {
#define TL_PROMOTES(name, Enum, promotes) \
  case UnaryOp::Enum: return promotes;
    TL_FORALL_UNARY_OPS(TL_PROMOTES)
#undef TL_PROMOTES
  }
  return false;
}

Tensor unary(UnaryOp op, const Tensor& self, Tensor out) {
  const char* name = unary_name(op);
  ScalarType compute = self.dtype();
  if (unary_promotes(op) && !is_floating_type(compute)) compute = kDefaultFloat;
  TL_CHECK_TYPE(!(op == UnaryOp::Neg && compute == ScalarType::Bool),
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
                "use the `~` or `logical_not()` operator instead.");
  TL_CHECK_TYPE(!(op == UnaryOp::Relu && compute == ScalarType::Bool), "Boolean inputs not supported for relu");
  TL_CHECK_TYPE(!(op == UnaryOp::Abs && compute == ScalarType::Bool), name, ": not implemented for 'bool'");
  if (out.defined()) prepare_out(out, self.sizes(), compute, name);
  else out = empty_tensor(self.sizes(), compute, self.device());
  if (self.device().is_meta()) return out;
  TL_CHECK(self.device().is_cpu(), name, ": no CPU kernel for device ", self.device().str());
  Tensor target = out.dtype() == compute ? out : empty_tensor(self.sizes(), compute, self.device());
  cpu::unary_kernel(op, target, cast_to(self, compute));
  if (!target.is_same(out)) cpu::copy_kernel(out, target);
  return out;
}

}  // namespace

// add/sub carry alpha; mul/div/maximum don't.
#define TL_ALPHA_KERNELS(name, Enum)                                                                    \
  Tensor name##_impl(const Tensor& self, const Tensor& other, const Scalar& alpha) {                    \
    return binary(BinaryOp::Enum, self, other, alpha, Tensor());                                        \
  }                                                                                                     \
  Tensor name##_impl_(const Tensor& self, const Tensor& other, const Scalar& alpha) {                   \
    return binary_inplace(BinaryOp::Enum, self, other, alpha);                                          \
  }                                                                                                     \
  Tensor name##_out_impl(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) { \
    return binary(BinaryOp::Enum, self, other, alpha, out);                                             \
  }
#define TL_PLAIN_KERNELS(name, Enum)                                                                    \
  Tensor name##_impl(const Tensor& self, const Tensor& other) {                                         \
    return binary(BinaryOp::Enum, self, other, Scalar(1), Tensor());                                    \
  }                                                                                                     \
  Tensor name##_out_impl(const Tensor& self, const Tensor& other, const Tensor& out) {                  \
    return binary(BinaryOp::Enum, self, other, Scalar(1), out);                                         \
  }
#define TL_PLAIN_INPLACE_KERNEL(name, Enum)                                                             \
  Tensor name##_impl_(const Tensor& self, const Tensor& other) {                                        \
    return binary_inplace(BinaryOp::Enum, self, other, Scalar(1));                                      \
  }
TL_ALPHA_KERNELS(add, Add)
TL_ALPHA_KERNELS(sub, Sub)
TL_PLAIN_KERNELS(mul, Mul)
TL_PLAIN_INPLACE_KERNEL(mul, Mul)
TL_PLAIN_KERNELS(div, Div)
TL_PLAIN_INPLACE_KERNEL(div, Div)
TL_PLAIN_KERNELS(maximum, Maximum)
TL_FORALL_COMPARISON_OPS(TL_PLAIN_KERNELS)
#undef TL_ALPHA_KERNELS
#undef TL_PLAIN_KERNELS
#undef TL_PLAIN_INPLACE_KERNEL

#define TL_UNARY_KERNELS(name, Enum, promotes)                                                          \
  Tensor name##_impl(const Tensor& self) { return unary(UnaryOp::Enum, self, Tensor()); }               \
  Tensor name##_out_impl(const Tensor& self, const Tensor& out) { return unary(UnaryOp::Enum, self, out); }
TL_FORALL_UNARY_OPS(TL_UNARY_KERNELS)
#undef TL_UNARY_KERNELS

Tensor where_impl(const Tensor& condition, const Tensor& self, const Tensor& other) {
  TL_CHECK_TYPE(condition.dtype() == ScalarType::Bool, "where expected condition to be a boolean tensor, but got a "
                                                       "tensor with dtype ", scalar_type_name(condition.dtype()));
  ScalarType result = result_type({&self, &other});
  auto shape = broadcast_shapes(condition.sizes(), broadcast_shapes(self.sizes(), other.sizes()));
  Device device = common_device({&condition, &self, &other});
  Tensor out = empty_tensor(shape, result, device);
  if (device.is_meta()) return out;
  cpu::where_kernel(out, expand_view(condition, shape), expand_view(cast_to(self, result), shape),
                    expand_view(cast_to(other, result), shape));
  return out;
}

}  // namespace tensorlet::native
