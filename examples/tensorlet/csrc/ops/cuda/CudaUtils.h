#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>

#include "core/Tensor.h"
#include "ops/TensorIterator.h"

namespace tensorlet::cuda {

void check(cudaError_t err, const char* what);

// Dims of a strided kernel's layout after the shared LoopPlan has coalesced them (size-1
// dims dropped, neighbours merged where every operand's strides line up): torch's
// MAX_DIMS, a bound no tensorlet layout reaches in practice. The operands are LoopPlan's
// own limit (the output and up to three inputs, where's), the CPU's too.
constexpr int kMaxDims = 25;
constexpr int kMaxKernelOperands = kMaxOperands;
constexpr int kThreads = 256;  // threads per block of every kernel but mm's

// The LoopPlan's shape and per-operand strides (operand 0: the output), passed by value
// to the elementwise kernels that walk arbitrary layouts.
struct Geometry {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxKernelOperands][kMaxDims];
};

// Operands of one shape (the first one's), in order: make_loop_plan's coalesced plan, the
// one the CPU loops walk, so both backends coalesce the same way.
Geometry geometry(std::initializer_list<const Tensor*> operands);

// The stream every tensorlet kernel, copy and library call (cuBLAS) runs on: the default
// stream (kernels launch without one), so each is ordered after the ones before it.
inline cudaStream_t current_stream() { return nullptr; }

inline int blocks_for(int64_t n, int threads) { return static_cast<int>((n + threads - 1) / threads); }

// Blocks for a grid-stride loop over `work_items`: enough to fill every SM several
// times over; more only adds scheduling.
int grid_for(int64_t work_items);

// The current device's count of a one-kernel reduction's finished blocks (ReduceKernels.cu):
// zero between reductions, since the last block of each puts it back, and one per device
// is enough because every kernel runs in order on current_stream().
unsigned* reduction_counter();

}  // namespace tensorlet::cuda
