#pragma once
// The elementwise operator families. Each op name appears once in an X-macro
// list; the kernels registered in ops.yaml and the CPU loops are stamped out
// from these lists.
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

namespace cpu {
// `out` has the compute dtype (bool for comparisons) and the broadcast shape;
// `a`/`b` have the compute dtype and are already expanded to it.
void binary_kernel(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha);
void unary_kernel(UnaryOp op, const Tensor& out, const Tensor& a);
void where_kernel(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void copy_kernel(const Tensor& dst, const Tensor& src);  // same shape, any dtypes
void fill_kernel(const Tensor& dst, const Scalar& value);
}  // namespace cpu

}  // namespace tensorlet
