// libtensorlet_cuda's host side: the CUDA allocator (registered when this
// library is loaded), and the device query and synchronization tensorlet.cuda
// calls through ctypes.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "core/Allocator.h"
#include "core/Exception.h"
#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(err));
}

namespace {

// A caching allocator, as PyTorch's: cudaFree waits for the whole device, so freeing
// a temporary (a sum's partials, an op's result) after every call would serialize the
// host with the GPU and leave it idle between kernels. Freed blocks go to a free list
// keyed by their rounded size and are handed out again; everything runs on the default
// stream, so a kernel that reuses a block is ordered after every kernel that used it.
// The cache is given back to the driver only when cudaMalloc fails.
class CachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    const Device where(DeviceType::CUDA, static_cast<int8_t>(device));
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, where);
    const size_t size = round_up(nbytes);
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find({device, size});
      if (it != free_.end()) {
        p = it->second;
        free_.erase(it);
      }
    }
    if (p == nullptr && cudaMalloc(&p, size) != cudaSuccess) {
      cudaGetLastError();  // the failed allocation's error is not sticky; retry on an empty cache
      release_cached();
      check(cudaMalloc(&p, size), "cudaMalloc");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    live_[p] = {device, size};
    return DataPtr(p, p, &CachingAllocator::free_block, where);
  }

  void copy_data(void* dst, const void* src, size_t n) const override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice), "cudaMemcpy");
  }

 private:
  using Key = std::pair<int, size_t>;  // device, rounded size

  // 512-byte steps up to 1 MiB, then 2 MiB steps: few distinct sizes, little waste.
  static size_t round_up(size_t n) {
    const size_t step = n <= (size_t{1} << 20) ? 512 : (size_t{2} << 20);
    return (n + step - 1) / step * step;
  }

  static void free_block(void* p);

  void release_cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [key, p] : free_) cudaFree(p);
    free_.clear();
  }

  std::mutex mutex_;
  std::multimap<Key, void*> free_;
  std::unordered_map<void*, Key> live_;
};

// Never destroyed: tensors can outlive this library's static objects at exit.
CachingAllocator& the_allocator() {
  static auto* allocator = new CachingAllocator;
  return *allocator;
}

void CachingAllocator::free_block(void* p) {
  CachingAllocator& a = the_allocator();
  std::lock_guard<std::mutex> lock(a.mutex_);
  auto it = a.live_.find(p);
  if (it == a.live_.end()) return;
  a.free_.emplace(it->second, p);
  a.live_.erase(it);
}

struct Register {
  Register() { set_allocator(DeviceType::CUDA, &the_allocator()); }
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
