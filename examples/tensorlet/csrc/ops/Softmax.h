#pragma once
// softmax / log_softmax prepared once for every backend: the result dtype (dtype= casts
// first; bool and integer inputs without it are refused, as torch refuses them), the
// wrapped dim and the result. A backend runs its rows over (input, out) along `dim`.
#include <optional>

#include "core/Tensor.h"

namespace tensorlet::native {

struct SoftmaxIteration {
  Tensor out;
  Tensor input;     // self cast to out's dtype; undefined for the Meta device
  int64_t dim = 0;  // wrapped
};
SoftmaxIteration softmax_iteration(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype);

// The iteration's rows as contiguous [rows, cols] buffers: the input and result themselves
// when `dim` is the last dim of a contiguous input, else a transposed contiguous copy and
// a temporary that finish() copies back into `out`. A backend's kernel runs row by row.
struct SoftmaxRows {
  Tensor in, out;
  int64_t rows = 0, cols = 1;
  bool direct = true;
  void finish(const SoftmaxIteration& it) const;
};
SoftmaxRows softmax_rows(const SoftmaxIteration& it);

}  // namespace tensorlet::native
