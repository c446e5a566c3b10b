// The CUDA kernels of the ops (DROPIN_CUDA=1). The tests have no GPU: they compile,
// device-link (dlink=True: fma_of lives in another translation unit) and load this.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace dropin_ops {

__device__ float fma_of(float a, float b, float c);  // device.cu

__global__ void muladd_kernel(int64_t n, const float* a, const float* b, float c, float* out) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = fma_of(a[i], b[i], c);
}

at::Tensor muladd_cuda(const at::Tensor& a, const at::Tensor& b, double c) {
  TORCH_CHECK(a.sizes() == b.sizes() && a.is_cuda() && b.is_cuda(), "CUDA tensors of one shape");
  at::Tensor ac = a.contiguous(), bc = b.contiguous();
  at::Tensor out = at::empty_like(ac);
  const int64_t n = out.numel();
  muladd_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(n, ac.data_ptr<float>(), bc.data_ptr<float>(),
                                                                 static_cast<float>(c), out.data_ptr<float>());
  return out;
}

TORCH_LIBRARY_IMPL(dropin_ops, CUDA, m) { m.impl("muladd", &muladd_cuda); }

}  // namespace dropin_ops
