#pragma once
// The entry points a backend registers for the elementwise ops (ops.yaml's functional,
// in-place and out= overloads), stamped out for backend B as name_B, name_B_ and
// name_out_B around the backend's own
//   Tensor binary(BinaryOp, const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out);
//   Tensor unary(UnaryOp, const Tensor& self, Tensor out);
// where an undefined `out` asks for a new result and `out` = self is in-place.
#include "ops/Elementwise.h"

// add/sub carry alpha; mul/div/maximum and the comparisons don't.
#define TL_BINARY_ALPHA_VARIANTS(B, name, Enum)                                                         \
  Tensor name##_##B(const Tensor& self, const Tensor& other, const Scalar& alpha) {                     \
    return binary(BinaryOp::Enum, self, other, alpha, Tensor());                                        \
  }                                                                                                     \
  Tensor name##_##B##_(const Tensor& self, const Tensor& other, const Scalar& alpha) {                  \
    return binary(BinaryOp::Enum, self, other, alpha, self);                                            \
  }                                                                                                     \
  Tensor name##_out_##B(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) { \
    return binary(BinaryOp::Enum, self, other, alpha, out);                                             \
  }
#define TL_BINARY_VARIANTS(B, name, Enum)                                                               \
  Tensor name##_##B(const Tensor& self, const Tensor& other) {                                          \
    return binary(BinaryOp::Enum, self, other, Scalar(1), Tensor());                                    \
  }                                                                                                     \
  Tensor name##_out_##B(const Tensor& self, const Tensor& other, const Tensor& out) {                   \
    return binary(BinaryOp::Enum, self, other, Scalar(1), out);                                         \
  }
#define TL_BINARY_INPLACE_VARIANT(B, name, Enum)                                                        \
  Tensor name##_##B##_(const Tensor& self, const Tensor& other) {                                       \
    return binary(BinaryOp::Enum, self, other, Scalar(1), self);                                        \
  }
#define TL_UNARY_VARIANTS(B, name, Enum)                                                                \
  Tensor name##_##B(const Tensor& self) { return unary(UnaryOp::Enum, self, Tensor()); }                \
  Tensor name##_out_##B(const Tensor& self, const Tensor& out) { return unary(UnaryOp::Enum, self, out); }

// Every binary op's entry points for backend B (TL_FORALL_ARITHMETIC_OPS and
// TL_FORALL_COMPARISON_OPS); the unary ones come from TL_FORALL_UNARY_OPS through a
// one-line adapter in the backend: TL_UNARY_VARIANTS(B, name, Enum).
#define TL_BINARY_KERNELS(B)                                                                            \
  TL_BINARY_ALPHA_VARIANTS(B, add, Add)                                                                 \
  TL_BINARY_ALPHA_VARIANTS(B, sub, Sub)                                                                 \
  TL_BINARY_VARIANTS(B, mul, Mul)                                                                       \
  TL_BINARY_INPLACE_VARIANT(B, mul, Mul)                                                                \
  TL_BINARY_VARIANTS(B, div, Div)                                                                       \
  TL_BINARY_INPLACE_VARIANT(B, div, Div)                                                                \
  TL_BINARY_VARIANTS(B, maximum, Maximum)                                                               \
  TL_BINARY_VARIANTS(B, eq, Eq)                                                                         \
  TL_BINARY_VARIANTS(B, lt, Lt)                                                                         \
  TL_BINARY_VARIANTS(B, gt, Gt)
