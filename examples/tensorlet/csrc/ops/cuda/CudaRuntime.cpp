// libtensorlet_cuda's host side: the CUDA allocator (registered when this
// library is loaded), and the device query and synchronization tensorlet.cuda
// calls through ctypes.
#include <cuda_runtime.h>

#include "core/Allocator.h"
#include "core/Exception.h"
#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(err));
}

namespace {

void cuda_free(void* p) { cudaFree(p); }

struct CudaAllocator final : Allocator {
  DataPtr allocate(size_t nbytes) override {
    void* p = nullptr;
    if (nbytes > 0) check(cudaMalloc(&p, nbytes), "cudaMalloc");
    int device = 0;
    cudaGetDevice(&device);
    return DataPtr(p, p, &cuda_free, Device(DeviceType::CUDA, static_cast<int8_t>(device)));
  }
  void copy_data(void* dst, const void* src, size_t n) const override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice), "cudaMemcpy");
  }
};

CudaAllocator g_allocator;
struct Register {
  Register() { set_allocator(DeviceType::CUDA, &g_allocator); }
} g_register;

}  // namespace
}  // namespace tensorlet::cuda

extern "C" __attribute__((visibility("default"))) int tensorlet_cuda_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

// nullptr once every queued kernel and copy has finished, else CUDA's message for the
// first error (kernels run asynchronously: their faults surface here).
extern "C" __attribute__((visibility("default"))) const char* tensorlet_cuda_synchronize(void) {
  cudaError_t err = cudaDeviceSynchronize();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

// The current device's name ("NVIDIA H100 80GB HBM3"), or "" when it cannot be queried.
extern "C" __attribute__((visibility("default"))) const char* tensorlet_cuda_device_name(void) {
  static thread_local cudaDeviceProp props;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&props, device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return props.name;
}
