#pragma once
#include <optional>
#include <vector>

#include "core/Tensor.h"

namespace tensorlet {
// The reduced dims of `dim` (None or [] = all) for a tensor of rank `ndim`, wrapped and
// sorted: the reductions of every backend and their derivatives share it.
std::vector<int64_t> reduction_dims(const std::optional<std::vector<int64_t>>& dim, int64_t ndim);
}  // namespace tensorlet

namespace tensorlet::native {
// A reduction's input as a contiguous [outer, reduced, inner] block (a free view when
// the reduced dims are adjacent in a contiguous tensor, one copy otherwise); every
// backend's kernels start from it. `dims` are wrapped and sorted (reduction_dims).
struct ReduceLayout {
  Tensor input;  // contiguous
  int64_t outer = 1, reduced = 1, inner = 1;
  std::vector<int64_t> out_shape;
};
ReduceLayout reduce_layout(const Tensor& self, const std::vector<int64_t>& dims, bool keepdim);

// sum / mean / amax / argmax prepared once for every backend: torch's refusals, the
// result (allocated in its dtype) and the layout, its input already in the dtype the
// loop accumulates in (int64 for integer sums, dtype= when given). A backend runs its
// loop over layout -> out (for mean the sum), then finish_reduction.
struct ReduceIteration {
  Tensor out;
  ReduceLayout layout;  // layout.input undefined for the Meta device
  std::optional<int64_t> mean_count;  // mean: the elements per result, to divide the sum by
};
ReduceIteration sum_iteration(const Tensor& self, const std::optional<std::vector<int64_t>>& dim, bool keepdim,
                              const std::optional<ScalarType>& dtype);
ReduceIteration mean_iteration(const Tensor& self, const std::optional<std::vector<int64_t>>& dim, bool keepdim,
                               const std::optional<ScalarType>& dtype);
ReduceIteration amax_iteration(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim);
ReduceIteration argmax_iteration(const Tensor& self, const std::optional<int64_t>& dim, bool keepdim);
// After the loop: mean's division (through the dispatcher, on the result's device);
// `out` itself for the other reductions.
Tensor finish_reduction(const ReduceIteration& it);
}  // namespace tensorlet::native

// The entry points a backend registers for sum / mean / amax / argmax (ops.yaml), stamped
// out for backend B as sum_B, mean_B, amax_B and argmax_B around the backend's own
//   template <template <typename> class Reducer> void reduce(const ReduceIteration&, const char* name);
// (ops/ReduceOps.h's SumReducer, MaxReducer, ArgMaxReducer), which runs nothing where
// the iteration has no input (the Meta device).
#define TL_REDUCE_KERNELS(B)                                                                            \
  Tensor sum_##B(const Tensor& self, const std::optional<std::vector<int64_t>>& dim, bool keepdim,      \
                 const std::optional<ScalarType>& dtype) {                                              \
    ReduceIteration it = sum_iteration(self, dim, keepdim, dtype);                                      \
    reduce<ops::SumReducer>(it, "sum");                                                                 \
    return finish_reduction(it);                                                                        \
  }                                                                                                     \
  Tensor mean_##B(const Tensor& self, const std::optional<std::vector<int64_t>>& dim, bool keepdim,     \
                  const std::optional<ScalarType>& dtype) {                                             \
    ReduceIteration it = mean_iteration(self, dim, keepdim, dtype);                                     \
    reduce<ops::SumReducer>(it, "mean");                                                                \
    return finish_reduction(it);                                                                        \
  }                                                                                                     \
  Tensor amax_##B(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim) {                  \
    ReduceIteration it = amax_iteration(self, dim, keepdim);                                            \
    reduce<ops::MaxReducer>(it, "amax");                                                                \
    return finish_reduction(it);                                                                        \
  }                                                                                                     \
  Tensor argmax_##B(const Tensor& self, const std::optional<int64_t>& dim, bool keepdim) {              \
    ReduceIteration it = argmax_iteration(self, dim, keepdim);                                          \
    reduce<ops::ArgMaxReducer>(it, "argmax");                                                           \
    return finish_reduction(it);                                                                        \
  }
