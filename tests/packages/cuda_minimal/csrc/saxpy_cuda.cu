#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "cuda_minimal/cuda_minimal.h"

namespace cuda_minimal::gpu {
namespace {

// "CUDA error in <call>: <name> (<text>)", clearing the error so the next call starts clean.
void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  cudaGetLastError();
  throw CudaError(std::string("CUDA error in ") + call + ": " + cudaGetErrorName(status) + " (" +
                  cudaGetErrorString(status) + ")");
}

__global__ void saxpy_kernel(float a, const float* x, float* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    y[i] += a * x[i];
}

using DevicePtr = std::unique_ptr<float, decltype(&cudaFree)>;

DevicePtr device_copy(const float* host, std::size_t n) {
  float* raw = nullptr;
  check(cudaMalloc(&raw, n * sizeof(float)), "cudaMalloc");
  DevicePtr owned(raw, &cudaFree);
  check(cudaMemcpy(raw, host, n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  return owned;
}

}  // namespace

void saxpy(float a, const float* x, float* y, std::size_t n) {
  if (n == 0) return;
  DevicePtr dx = device_copy(x, n), dy = device_copy(y, n);
  saxpy_kernel<<<static_cast<unsigned>((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024), 256>>>(a, dx.get(),
                                                                                                 dy.get(), n);
  check(cudaGetLastError(), "saxpy_kernel");
  check(cudaMemcpy(y, dy.get(), n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
}

int device_count(std::string* why) noexcept {
  int count = 0;
  if (cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    return 0;
  }
  if (count == 0 && why) *why = "no CUDA device found";
  return count;
}

}  // namespace cuda_minimal::gpu
