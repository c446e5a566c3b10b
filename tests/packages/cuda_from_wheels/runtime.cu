#include <cuda_runtime.h>
#include <curand.h>

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

// cuRAND from NVIDIA's wheel: its version needs no GPU; generating numbers does.
extern "C" int cfw_curand_version(void) {
  int version = 0;
  return curandGetVersion(&version) == CURAND_STATUS_SUCCESS ? version : -1;
}

extern "C" const char* cfw_curand_generate(void) {
  curandGenerator_t generator;
  if (curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_DEFAULT) != CURAND_STATUS_SUCCESS) return "create failed";
  float* values = nullptr;
  const char* result = cudaMalloc(&values, 64 * sizeof(float)) == cudaSuccess &&
                               curandGenerateUniform(generator, values, 64) == CURAND_STATUS_SUCCESS
                           ? "ok" : "generate failed";
  cudaFree(values);
  curandDestroyGenerator(generator);
  return result;
}
