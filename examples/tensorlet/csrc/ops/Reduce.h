#pragma once
#include "core/Tensor.h"

namespace tensorlet::cpu {
// `in` is contiguous [outer, reduced, inner]; `out` is contiguous [outer, inner].
enum class ReduceOp { Sum, Max };
void reduce_kernel(ReduceOp op, const Tensor& out, const Tensor& in, int64_t outer, int64_t reduced, int64_t inner);
// Index of the first maximum along `reduced`; `out` is int64.
void argmax_kernel(const Tensor& out, const Tensor& in, int64_t outer, int64_t reduced, int64_t inner);
}  // namespace tensorlet::cpu
