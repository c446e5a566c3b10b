// The host side of every kernel launch: operand geometry and grid sizes.
#include <algorithm>

#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {

Geometry geometry(std::initializer_list<const Tensor*> operands) {
  const Tensor& first = **operands.begin();
  TL_CHECK(first.dim() <= kMaxDims, "CUDA kernels support at most ", kMaxDims, " dims");
  TL_CHECK(operands.size() <= kMaxKernelOperands, "CUDA kernels take at most ", kMaxKernelOperands, " operands");
  Geometry g{};
  g.ndim = static_cast<int>(first.dim());
  for (int d = 0; d < g.ndim; ++d) g.sizes[d] = first.sizes()[d];
  int k = 0;
  for (const Tensor* t : operands) {
    for (int d = 0; d < g.ndim; ++d) g.strides[k][d] = t->strides()[d];
    ++k;
  }
  return g;
}

int grid_for(int64_t work_items) {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const int64_t cap = static_cast<int64_t>(std::max(sms, 1)) * 8;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cap, blocks_for(work_items, kThreads))));
}

}  // namespace tensorlet::cuda
