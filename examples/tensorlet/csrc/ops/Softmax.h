#pragma once
// softmax / log_softmax prepared once for every backend: the result dtype (integer
// inputs give the default float dtype, dtype= casts first), the wrapped dim and the
// result. A backend runs its rows over (input, out) along `dim`.
#include <optional>

#include "core/Tensor.h"

namespace tensorlet::native {

struct SoftmaxIteration {
  Tensor out;
  Tensor input;     // self cast to out's dtype; undefined for the Meta device
  int64_t dim = 0;  // wrapped
};
SoftmaxIteration softmax_iteration(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype);

}  // namespace tensorlet::native
