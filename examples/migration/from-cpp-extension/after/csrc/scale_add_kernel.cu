// The kernel and its host launcher: plain CUDA, no PyTorch.
#include <cuda_runtime.h>

#include <string>

#include "cuext/cuext.h"

namespace cuext {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw CudaError(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
  }
}

__global__ void scale_add_kernel(const float* x, const float* y, float alpha, float* out, std::size_t n) {
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + alpha * y[i];
}

struct DeviceBuffer {
  float* ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
};

}  // namespace

void scale_add(const float* x, const float* y, float alpha, float* out, std::size_t n) {
  if (n == 0) return;
  const std::size_t bytes = n * sizeof(float);
  DeviceBuffer dx, dy, dout;
  check(cudaMalloc(reinterpret_cast<void**>(&dx.ptr), bytes), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&dy.ptr), bytes), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&dout.ptr), bytes), "cudaMalloc");
  check(cudaMemcpy(dx.ptr, x, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(dy.ptr, y, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  scale_add_kernel<<<blocks, threads>>>(dx.ptr, dy.ptr, alpha, dout.ptr, n);
  check(cudaGetLastError(), "scale_add_kernel launch");
  check(cudaMemcpy(out, dout.ptr, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

const char* architectures() noexcept { return CUEXT_ARCHITECTURES; }

}  // namespace cuext
