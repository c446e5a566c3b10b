#pragma once
// The elementwise operator families and what every backend shares of them. Each op
// name appears once in an X-macro list; the kernels registered in ops.yaml (see
// KernelVariants.h) are stamped out from these lists. The backends' loops live in
// ops/cpu and ops/cuda; nothing here names a backend.
#include "core/Tensor.h"

namespace tensorlet {

// _(name, Enum)
#define TL_FORALL_ARITHMETIC_OPS(_) _(add, Add) _(sub, Sub) _(mul, Mul) _(div, Div) _(maximum, Maximum)
#define TL_FORALL_COMPARISON_OPS(_) _(eq, Eq) _(lt, Lt) _(gt, Gt)
// _(name, Enum, promotes integers to float)
#define TL_FORALL_UNARY_OPS(_)                                                                      \
  _(neg, Neg, false) _(exp, Exp, true) _(log, Log, true) _(sqrt, Sqrt, true) _(abs, Abs, false)     \
  _(relu, Relu, false) _(sigmoid, Sigmoid, true) _(tanh, Tanh, true) _(sign, Sign, false)

enum class BinaryOp {
#define TL_ENUM(name, Enum) Enum,
  TL_FORALL_ARITHMETIC_OPS(TL_ENUM) TL_FORALL_COMPARISON_OPS(TL_ENUM)
#undef TL_ENUM
};

enum class UnaryOp {
#define TL_ENUM(name, Enum, promotes) Enum,
  TL_FORALL_UNARY_OPS(TL_ENUM)
#undef TL_ENUM
};

const char* binary_name(BinaryOp op);
bool is_comparison(BinaryOp op);  // eq, lt, gt: a bool result

// Where an elementwise op writes, decided once for every backend: `out` is what the op
// returns (a new result, or the out= / in-place tensor checked by prepare_out and
// resized when empty); `target` is where the backend's loop writes: `out` itself, or a
// temporary in the result dtype when out= has another dtype (the loops don't convert).
struct ElementwiseOutput {
  Tensor out;
  Tensor target;
  // After the loop: `target` copied (and cast) into `out` where they differ; returns `out`.
  Tensor finish() const;
};

// A binary op prepared once for every backend (the role of PyTorch's TensorIterator):
// torch's refusals, the compute dtype, the broadcast shape, the common device and the
// output. `a` and `b` come cast to the compute dtype, on the output's device, expanded
// to the shape (a CPU 0-dim operand joins a CUDA iteration by a copy). A backend only
// runs its loop over (target, a, b), then calls finish().
struct BinaryIteration : ElementwiseOutput {
  Tensor a, b;  // undefined for the Meta device: there is no loop to run
  ScalarType compute = ScalarType::Float;
};
BinaryIteration binary_iteration(BinaryOp op, const Tensor& self, const Tensor& other, const Scalar& alpha,
                                 Tensor out);

const char* unary_name(UnaryOp op);

// A unary op prepared once for every backend: torch's refusals, the compute dtype
// (float for the ops that promote integers), the output and `a`, self cast to the
// compute dtype. A backend runs its loop over (target, a), then calls finish().
struct UnaryIteration : ElementwiseOutput {
  Tensor a;  // undefined for the Meta device
  ScalarType compute = ScalarType::Float;
};
UnaryIteration unary_iteration(UnaryOp op, const Tensor& self, Tensor out);

// where(condition, self, other) prepared once for every backend: the result dtype of
// self and other, the broadcast shape of all three, the common device; the operands
// come expanded to the shape (self and other cast to the result dtype).
struct WhereIteration {
  Tensor out;
  Tensor condition, a, b;  // undefined for the Meta device
};
WhereIteration where_iteration(const Tensor& condition, const Tensor& self, const Tensor& other);

}  // namespace tensorlet
