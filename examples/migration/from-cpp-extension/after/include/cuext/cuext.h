#pragma once

#include <cstddef>
#include <stdexcept>

namespace cuext {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// out[i] = x[i] + alpha * y[i] on the GPU; throws CudaError when CUDA fails (no GPU...).
void scale_add(const float* x, const float* y, float alpha, float* out, std::size_t n);

// The CMAKE_CUDA_ARCHITECTURES this library was compiled for.
const char* architectures() noexcept;

}  // namespace cuext
