// The CUDA loops of softmax and log_softmax: one numerically stable row at a time (the
// row's max, then the sum of exp(x - max), then each element), a warp per row for rows of
// up to kWarpRowMax elements and a block per row beyond. The result dtype (integers give
// the default float, dtype= casts first), the wrapped dim and the layout of the rows come
// from the shared layer (ops/Softmax.h), as for the CPU's kernel.
#include <cuda_runtime.h>

#include <algorithm>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Softmax.h"
#include "ops/cuda/Loops.cuh"

namespace tensorlet::cuda {
namespace {

constexpr int64_t kWarpRowMax = 1024;
constexpr int kWarp = 32;

struct Max {
  // A NaN is dropped here but not lost: exp(NaN - max) makes the row's sum, so every
  // element of the row, NaN (torch's result).
  template <typename T>
  __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};
struct Add {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};

template <typename T, typename Op>
__device__ T warp_all_reduce(T v, Op op) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of a group (a warp, or the whole block) gets the group's reduction. A
// block-wide group synchronizes the block: all of its threads must call it.
template <int kGroup, typename T, typename Op>
__device__ T group_all_reduce(T v, Op op) {
  v = warp_all_reduce(v, op);
  if constexpr (kGroup > kWarp) {
    __shared__ T partial[kGroup / kWarp];
    if (threadIdx.x % kWarp == 0) partial[threadIdx.x / kWarp] = v;
    __syncthreads();
    v = partial[0];
#pragma unroll
    for (int w = 1; w < kGroup / kWarp; ++w) v = op(v, partial[w]);
    __syncthreads();  // the next call may overwrite `partial`
  }
  return v;
}

template <typename T>
__device__ T exp_of(T x) {
  if constexpr (sizeof(T) == 4) return expf(x); else return ::exp(x);  // ::, not the tensorlet op
}
template <typename T>
__device__ T log_of(T x) {
  if constexpr (sizeof(T) == 4) return logf(x); else return ::log(x);
}

// Rows [rows, cols] of `in` into `out`, kGroup threads per row (kThreads / kGroup rows
// per block), the rows strided over the grid.
template <int kGroup, bool Log, typename T>
__global__ void softmax_rows_kernel(const T* in, T* out, int64_t rows, int64_t cols) {
  constexpr int kRowsPerBlock = kThreads / kGroup;
  const int lane = static_cast<int>(threadIdx.x % kGroup);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.x / kGroup; row < rows;
       row += stride) {
    const T* x = in + row * cols;
    T* y = out + row * cols;
    T max = -INFINITY;
    for (int64_t j = lane; j < cols; j += kGroup) max = Max{}(max, x[j]);
    max = group_all_reduce<kGroup>(max, Max{});
    T sum = 0;
    for (int64_t j = lane; j < cols; j += kGroup) sum += exp_of(x[j] - max);
    sum = group_all_reduce<kGroup>(sum, Add{});
    if constexpr (Log) {
      const T log_sum = log_of(sum);
      for (int64_t j = lane; j < cols; j += kGroup) y[j] = x[j] - max - log_sum;
    } else {
      const T scale = T(1) / sum;
      for (int64_t j = lane; j < cols; j += kGroup) y[j] = exp_of(x[j] - max) * scale;
    }
  }
}

template <int kGroup, bool Log, typename T>
void launch_rows(const T* in, T* out, int64_t rows, int64_t cols) {
  constexpr int64_t kRowsPerBlock = kThreads / kGroup, kMaxBlocks = int64_t{1} << 20;
  const int64_t blocks = std::min(kMaxBlocks, (rows + kRowsPerBlock - 1) / kRowsPerBlock);
  softmax_rows_kernel<kGroup, Log><<<static_cast<unsigned>(blocks), kThreads>>>(in, out, rows, cols);
}

template <bool Log>
Tensor softmax_cuda_common(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  const char* name = Log ? "log_softmax" : "softmax";
  const native::SoftmaxIteration it = native::softmax_iteration(self, dim, dtype);
  if (it.out.numel() == 0) return it.out;
  const native::SoftmaxRows rows = native::softmax_rows(it);
  TL_DISPATCH_FLOAT_TYPES(it.out.dtype(), name, {
    const scalar_t* in = rows.in.data<scalar_t>();
    scalar_t* out = rows.out.data<scalar_t>();
    if (rows.cols <= kWarpRowMax)
      launch_rows<kWarp, Log>(in, out, rows.rows, rows.cols);
    else
      launch_rows<kThreads, Log>(in, out, rows.rows, rows.cols);
  });
  check(cudaGetLastError(), name);
  rows.finish(it);
  return it.out;
}

}  // namespace
}  // namespace tensorlet::cuda

namespace tensorlet::native {

Tensor softmax_cuda(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return cuda::softmax_cuda_common<false>(self, dim, dtype);
}

Tensor log_softmax_cuda(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return cuda::softmax_cuda_common<true>(self, dim, dtype);
}

}  // namespace tensorlet::native
