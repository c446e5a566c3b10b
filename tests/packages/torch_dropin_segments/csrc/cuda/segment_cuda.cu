// The CUDA kernel of segment_sum_csr (built with FORCE_CUDA=1, or where torch sees a GPU).
#include "segment_cuda.h"

#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>

namespace segments {
namespace {

constexpr int kThreads = 256;  // benchmarks/torch_extension.py edits this token

// One thread per (segment, column) of the output, in a grid-stride loop.
template <typename scalar_t>
__global__ void segment_sum_csr_kernel(const scalar_t* src, const int64_t* indptr, scalar_t* out, int64_t segments,
                                       int64_t inner) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < segments * inner; i += stride) {
    const int64_t segment = i / inner, column = i % inner;
    scalar_t sum = 0;
    for (int64_t row = indptr[segment]; row < indptr[segment + 1]; ++row) sum += src[row * inner + column];
    out[i] = sum;
  }
}

}  // namespace

at::Tensor segment_sum_csr_cuda(const at::Tensor& src, const at::Tensor& indptr) {
  TORCH_CHECK(src.is_cuda() && indptr.is_cuda(), "src and indptr: CUDA tensors");
  TORCH_CHECK(indptr.dim() == 1 && indptr.scalar_type() == at::kLong, "indptr: a 1-d int64 tensor");
  TORCH_CHECK(src.dim() >= 1, "src: at least 1-d");
  const at::Tensor source = src.contiguous(), offsets = indptr.contiguous();
  const int64_t segments = offsets.size(0) - 1;
  const int64_t inner = source.size(0) == 0 ? 0 : source.numel() / source.size(0);
  auto sizes = source.sizes().vec();
  sizes[0] = segments;
  at::Tensor out = at::empty(sizes, source.options());
  const int64_t total = segments * inner;
  if (total == 0) return out.zero_();
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + kThreads - 1) / kThreads, 65535));
  const auto stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES(source.scalar_type(), "segment_sum_csr_cuda", [&] {
    segment_sum_csr_kernel<scalar_t><<<blocks, kThreads, 0, stream>>>(
        source.data_ptr<scalar_t>(), offsets.data_ptr<int64_t>(), out.data_ptr<scalar_t>(), segments, inner);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace segments
