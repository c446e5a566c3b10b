#include <cuda_runtime.h>

// The CUDA runtime's version: needs no GPU or driver.
extern "C" int cro_runtime_version(void) {
  int version = 0;
  return cudaRuntimeGetVersion(&version) == cudaSuccess ? version : -1;
}
