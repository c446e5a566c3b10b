// The host side of every kernel launch: operand geometry and grid sizes.
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {

Geometry geometry(std::initializer_list<const Tensor*> operands) {
  TL_CHECK(operands.size() <= kMaxKernelOperands, "CUDA kernels take at most ", kMaxKernelOperands, " operands");
  const LoopPlan plan = make_loop_plan(operands);
  const int ndim = static_cast<int>(plan.shape.size());
  TL_CHECK(ndim <= kMaxDims, "CUDA kernels walk at most ", kMaxDims, " dims that cannot be coalesced, this layout has ",
           ndim);
  Geometry g{};
  g.ndim = ndim;
  for (int d = 0; d < ndim; ++d) g.sizes[d] = plan.shape[d];
  for (int k = 0; k < plan.num_operands; ++k)
    for (int d = 0; d < ndim; ++d) g.strides[k][d] = plan.strides[k][d];
  return g;
}

int grid_for(int64_t work_items) {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const int64_t cap = static_cast<int64_t>(std::max(sms, 1)) * 8;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cap, blocks_for(work_items, kThreads))));
}

unsigned* reduction_counter() {
  static std::mutex mutex;
  static std::unordered_map<int, unsigned*> counters;  // by device; never freed, as the cuBLAS handles
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex);
  unsigned*& counter = counters[device];
  if (counter == nullptr) {
    void* p = nullptr;
    check(cudaMalloc(&p, sizeof(unsigned)), "cudaMalloc");
    check(cudaMemset(p, 0, sizeof(unsigned)), "cudaMemset");
    counter = static_cast<unsigned*>(p);
  }
  return counter;
}

}  // namespace tensorlet::cuda
