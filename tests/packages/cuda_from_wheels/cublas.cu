#include <cublas_v2.h>

// cuBLAS from NVIDIA's wheel: its version needs no GPU; a handle does.
extern "C" int cfw_cublas_version(void) {
  int major = 0, minor = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS)
    return -1;
  return major * 100 + minor;
}

extern "C" const char* cfw_cublas_create(void) {
  cublasHandle_t handle;
  cublasStatus_t status = cublasCreate(&handle);
  if (status == CUBLAS_STATUS_SUCCESS) cublasDestroy(handle);
  return cublasGetStatusName(status);
}
