// BEFORE (never built): the kernel, launched on PyTorch's current stream.
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

__global__ void scale_add_kernel(const float* x, const float* y, float alpha, float* out, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + alpha * y[i];
}

void scale_add_cuda(const torch::Tensor& x, const torch::Tensor& y, double alpha, torch::Tensor& out) {
  const int64_t n = x.numel();
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  scale_add_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), static_cast<float>(alpha), out.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
