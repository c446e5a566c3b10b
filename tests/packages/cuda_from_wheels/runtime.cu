#include <cuda_runtime.h>

__global__ void scale(float* values, float factor) { values[threadIdx.x] *= factor; }

// The CUDA runtime's version (needs no GPU or driver), and the first error of a kernel launch
// (on a machine without a driver: cudaErrorInsufficientDriver or cudaErrorNoDevice).
extern "C" int cfw_runtime_version(void) {
  int version = 0;
  return cudaRuntimeGetVersion(&version) == cudaSuccess ? version : -1;
}

extern "C" const char* cfw_launch(void) {
  scale<<<1, 32>>>(nullptr, 2.0f);
  return cudaGetErrorName(cudaGetLastError());
}
