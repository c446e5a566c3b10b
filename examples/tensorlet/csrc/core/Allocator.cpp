// The CPU and Meta allocators. Meta storages have a size but no memory: Meta
// kernels only compute shapes.
#include <cstdlib>
#include <cstring>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/Allocator.h"
#include "core/Environment.h"
#include "core/Exception.h"

namespace tensorlet {
namespace {

constexpr size_t kAlignment = 64;  // a cache line; also the widest SIMD load
// Below this, plain malloc (16-byte aligned, enough for every dtype; kernels load
// unaligned): glibc's aligned_alloc bypasses its per-thread cache and splits
// chunks, which made a one-element tensor's buffer cost more than its kernel.
constexpr size_t kSmallAllocation = 1024;
// From here on a buffer is aligned to a transparent huge page and the whole huge
// pages inside it are advised huge (Linux, THP in "madvise" mode, the common
// default): first touch then faults 2 MiB at a time instead of 4 KiB, which is most
// of the time an op with a new 64 MiB result spends. Only pages wholly inside the
// buffer are advised, so no tensor holds more memory than its size asks for.
// PyTorch offers the same behind THP_MEM_ALLOC_ENABLE=1; TENSORLET_HUGE_PAGES=0
// turns it off here.
constexpr size_t kHugePage = size_t(2) << 20;

bool huge_pages_enabled() {
  static const bool enabled = environment_switch("TENSORLET_HUGE_PAGES", true);
  return enabled;
}

struct CpuAllocator final : Allocator {
  DataPtr allocate(size_t nbytes) override {
    if (nbytes <= kSmallAllocation) {
      void* p = std::malloc(nbytes == 0 ? 1 : nbytes);
      TL_CHECK(p, "CPU out of memory allocating ", nbytes, " bytes");
      return DataPtr(p, p, &std::free, Device(DeviceType::CPU));
    }
    size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    const bool huge = nbytes >= kHugePage && huge_pages_enabled();
    void* p = std::aligned_alloc(huge ? kHugePage : kAlignment, rounded);
    TL_CHECK(p, "CPU out of memory allocating ", nbytes, " bytes");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Advice only: where THP is off, or the range is not fresh, nothing changes.
    if (huge) madvise(p, nbytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
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
