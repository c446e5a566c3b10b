#pragma once
// C++ operators on tensors, so backward formulas and composites read like math.
#include "core/Tensor.h"
#include "generated/Functions.h"

namespace tensorlet {

#define TL_BINARY_OPERATOR(sym, fn)                                                                   \
  inline Tensor operator sym(const Tensor& a, const Tensor& b) { return fn(a, b); }                   \
  inline Tensor operator sym(const Tensor& a, const Scalar& b) { return fn(a, wrapped_scalar_tensor(b)); } \
  inline Tensor operator sym(const Scalar& a, const Tensor& b) { return fn(wrapped_scalar_tensor(a), b); }
TL_BINARY_OPERATOR(+, add)
TL_BINARY_OPERATOR(-, sub)
TL_BINARY_OPERATOR(*, mul)
TL_BINARY_OPERATOR(/, div)
#undef TL_BINARY_OPERATOR

inline Tensor operator-(const Tensor& a) { return neg(a); }

}  // namespace tensorlet
