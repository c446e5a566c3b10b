#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace cuda_minimal {

// A CUDA runtime call failed; what() names the call and CUDA's own message.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Device { Auto, Cpu, Cuda };

// y = a * x + y over n floats. Auto runs on the GPU when one is usable, else on the
// CPU; Cuda throws CudaError when it cannot run there. Returns "cuda" or "cpu".
const char* saxpy(float a, const float* x, float* y, std::size_t n, Device device = Device::Auto);
void saxpy_cpu(float a, const float* x, float* y, std::size_t n);

// Whether a CUDA device can be used: false without a driver or a GPU, never a crash.
bool cuda_available() noexcept;
// The number of CUDA devices, 0 when there are none or the driver is missing.
int cuda_device_count() noexcept;
// "ok", or why no device can be used (CUDA's error text, or "built without CUDA").
std::string cuda_status();
// CMAKE_CUDA_ARCHITECTURES the library was compiled for; "" when built without CUDA.
const char* compiled_architectures() noexcept;
bool built_with_cuda() noexcept;

namespace detail {  // implemented in saxpy_cuda.cu when built with CUDA
void saxpy_cuda(float a, const float* x, float* y, std::size_t n);
int cuda_device_count(std::string* why) noexcept;
}  // namespace detail

}  // namespace cuda_minimal
