#pragma once
// The test package's CUDA core: saxpy on the GPU or the CPU, and what the tests ask
// of a CUDA build on a machine with no GPU (status strings, architectures).
#include <cstddef>
#include <stdexcept>
#include <string>

namespace cuda_minimal {

struct CudaError : std::runtime_error {  // what() names the failed call
  using std::runtime_error::runtime_error;
};

enum class Device { Auto, Cpu, Cuda };

// y <- a*x + y; returns the backend that ran it ("cuda" or "cpu").
const char* saxpy(float a, const float* x, float* y, std::size_t n, Device device);

bool built_with_cuda() noexcept;
const char* compiled_architectures() noexcept;  // CMAKE_CUDA_ARCHITECTURES, "" without CUDA
int cuda_device_count(std::string* why = nullptr) noexcept;  // 0 (and why) when none is usable

namespace gpu {  // saxpy_cuda.cu, or the throwing fallback without CUDA
void saxpy(float a, const float* x, float* y, std::size_t n);
int device_count(std::string* why) noexcept;
}  // namespace gpu

}  // namespace cuda_minimal
