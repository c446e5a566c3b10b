// The host half of libcuda_minimal: the CPU saxpy, the dispatch and the queries.
#include "cuda_minimal/cuda_minimal.h"

namespace cuda_minimal {

void saxpy_cpu(float a, const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

#if CUDA_MINIMAL_WITH_CUDA

const char* compiled_architectures() noexcept { return CUDA_MINIMAL_ARCHITECTURES; }
bool built_with_cuda() noexcept { return true; }
int cuda_device_count() noexcept { return detail::cuda_device_count(nullptr); }

std::string cuda_status() {
  std::string why;
  return detail::cuda_device_count(&why) > 0 ? "ok" : why;
}

#else

const char* compiled_architectures() noexcept { return ""; }
bool built_with_cuda() noexcept { return false; }
int cuda_device_count() noexcept { return 0; }
std::string cuda_status() { return "built without CUDA (USE_CUDA=OFF or no nvcc)"; }

namespace detail {
void saxpy_cuda(float, const float*, float*, std::size_t) {
  throw CudaError("cuda_minimal was built without CUDA (USE_CUDA=OFF or no nvcc)");
}
}  // namespace detail

#endif

bool cuda_available() noexcept { return cuda_device_count() > 0; }

const char* saxpy(float a, const float* x, float* y, std::size_t n, Device device) {
  if (device == Device::Cuda || (device == Device::Auto && cuda_available())) {
    detail::saxpy_cuda(a, x, y, n);
    return "cuda";
  }
  saxpy_cpu(a, x, y, n);
  return "cpu";
}

}  // namespace cuda_minimal
