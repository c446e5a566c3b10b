#include "cuda_minimal/cuda_minimal.h"

namespace cuda_minimal {

#if CUDA_MINIMAL_WITH_CUDA
bool built_with_cuda() noexcept { return true; }
const char* compiled_architectures() noexcept { return CUDA_MINIMAL_ARCHITECTURES; }
#else
bool built_with_cuda() noexcept { return false; }
const char* compiled_architectures() noexcept { return ""; }

namespace gpu {
static const char* const kNoCuda = "cuda_minimal was built without CUDA (USE_CUDA=OFF or no nvcc)";
void saxpy(float, const float*, float*, std::size_t) { throw CudaError(kNoCuda); }
int device_count(std::string* why) noexcept {
  if (why) *why = kNoCuda;
  return 0;
}
}  // namespace gpu
#endif

int cuda_device_count(std::string* why) noexcept { return gpu::device_count(why); }

const char* saxpy(float a, const float* x, float* y, std::size_t n, Device device) {
  if (device == Device::Cuda || (device == Device::Auto && cuda_device_count() > 0)) {
    gpu::saxpy(a, x, y, n);
    return "cuda";
  }
  for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
  return "cpu";
}

}  // namespace cuda_minimal
