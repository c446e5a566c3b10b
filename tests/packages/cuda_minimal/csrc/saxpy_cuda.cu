// The CUDA half of libcuda_minimal: the saxpy kernel and the device queries.
#include <cuda_runtime.h>

#include <string>

#include "cuda_minimal/cuda_minimal.h"

namespace cuda_minimal {
namespace {

// Turns a failed CUDA runtime call into a CudaError naming the call.
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear a sticky launch error so the next call starts clean
    throw CudaError(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
  }
}
#define CUDA_MINIMAL_CHECK(call) check((call), #call)

__global__ void saxpy_kernel(float a, const float* __restrict__ x, float* __restrict__ y, std::size_t n) {
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (; i < n; i += stride) y[i] = a * x[i] + y[i];
}

// Device memory freed on every path, the error path included.
struct DeviceBuffer {
  float* ptr = nullptr;
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
};

}  // namespace

namespace detail {

void saxpy_cuda(float a, const float* x, float* y, std::size_t n) {
  if (n == 0) return;
  const std::size_t bytes = n * sizeof(float);
  DeviceBuffer dx, dy;
  CUDA_MINIMAL_CHECK(cudaMalloc(reinterpret_cast<void**>(&dx.ptr), bytes));
  CUDA_MINIMAL_CHECK(cudaMalloc(reinterpret_cast<void**>(&dy.ptr), bytes));
  CUDA_MINIMAL_CHECK(cudaMemcpy(dx.ptr, x, bytes, cudaMemcpyHostToDevice));
  CUDA_MINIMAL_CHECK(cudaMemcpy(dy.ptr, y, bytes, cudaMemcpyHostToDevice));
  const unsigned threads = 256;
  const std::size_t wanted = (n + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(wanted < 4096 ? wanted : 4096);
  saxpy_kernel<<<blocks, threads>>>(a, dx.ptr, dy.ptr, n);
  CUDA_MINIMAL_CHECK(cudaGetLastError());  // launch errors (no kernel image for this GPU...)
  CUDA_MINIMAL_CHECK(cudaMemcpy(y, dy.ptr, bytes, cudaMemcpyDeviceToHost));  // waits for the kernel
}

int cuda_device_count(std::string* why) noexcept {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    return 0;
  }
  if (count == 0 && why) *why = "no CUDA device found";
  return count;
}

}  // namespace detail
}  // namespace cuda_minimal
