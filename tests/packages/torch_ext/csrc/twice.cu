// Compiled only with -DTORCHEXT_WITH_CUDA=ON; nothing calls it (the tests have no GPU).
// It includes ATen as a real CUDA op file does: torch's headers need torch's C++ standard
// under nvcc too (torch 2.15's ATen.h stops below C++20).
#include <ATen/ATen.h>

__global__ void torchext_twice_kernel(float* x, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] *= 2;
}

void torchext_twice(at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.is_contiguous(), "a contiguous float CUDA tensor");
  const int64_t n = x.numel();
  torchext_twice_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(x.data_ptr<float>(), n);
}
