#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/Tensor.h"

namespace tensorlet::cuda {

void check(cudaError_t err, const char* what);

constexpr int kMaxDims = 8;

// Shape and per-operand strides passed by value to elementwise kernels.
struct Geometry {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[3][kMaxDims];
};

inline int blocks_for(int64_t n, int threads) { return static_cast<int>((n + threads - 1) / threads); }

}  // namespace tensorlet::cuda
