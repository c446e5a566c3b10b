// The CPU and Meta allocators. Meta storages have a size but no memory: Meta
// kernels only compute shapes.
#include <cstdlib>
#include <cstring>

#include "core/Allocator.h"
#include "core/Exception.h"

namespace tensorlet {
namespace {

constexpr size_t kAlignment = 64;  // a cache line; also the widest SIMD load
// Below this, plain malloc (16-byte aligned, enough for every dtype; kernels load
// unaligned): glibc's aligned_alloc bypasses its per-thread cache and splits
// chunks, which made a one-element tensor's buffer cost more than its kernel.
constexpr size_t kSmallAllocation = 1024;

struct CpuAllocator final : Allocator {
  DataPtr allocate(size_t nbytes) override {
    if (nbytes <= kSmallAllocation) {
      void* p = std::malloc(nbytes == 0 ? 1 : nbytes);
      TL_CHECK(p, "CPU out of memory allocating ", nbytes, " bytes");
      return DataPtr(p, p, &std::free, Device(DeviceType::CPU));
    }
    size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded);
    TL_CHECK(p, "CPU out of memory allocating ", nbytes, " bytes");
    return DataPtr(p, p, &std::free, Device(DeviceType::CPU));
  }
  void copy_data(void* dst, const void* src, size_t n) const override { std::memcpy(dst, src, n); }
};

struct MetaAllocator final : Allocator {
  DataPtr allocate(size_t) override { return DataPtr(nullptr, nullptr, nullptr, Device(DeviceType::Meta)); }
  void copy_data(void*, const void*, size_t) const override {}
};

CpuAllocator g_cpu;
MetaAllocator g_meta;

struct RegisterBuiltinAllocators {
  RegisterBuiltinAllocators() {
    set_allocator(DeviceType::CPU, &g_cpu);
    set_allocator(DeviceType::Meta, &g_meta);
  }
} g_register_builtin_allocators;

}  // namespace
}  // namespace tensorlet
