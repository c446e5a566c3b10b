#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "ops/cpu/VecKernels.h"

namespace tensorlet::cpu {
namespace {

const VecKernels* choose() {
  const char* forced = std::getenv("TENSORLET_CPU_CAPABILITY");
#if defined(__x86_64__) && defined(TENSORLET_HAVE_AVX512_VARIANT)
  bool avx512 = __builtin_cpu_supports("avx512f");
#else
  bool avx512 = false;
#endif
#if defined(__x86_64__) && defined(TENSORLET_HAVE_AVX2_VARIANT)
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  bool avx2 = false;
#endif
  if (forced && std::strcmp(forced, "default") == 0) return vec_kernels_default();
  if (forced && std::strcmp(forced, "avx2") == 0 && avx2) return vec_kernels_avx2();
#if defined(TENSORLET_HAVE_AVX512_VARIANT)
  if (avx512) return vec_kernels_avx512();
#endif
#if defined(TENSORLET_HAVE_AVX2_VARIANT)
  if (avx2) return vec_kernels_avx2();
#endif
  return vec_kernels_default();
}

// Linux's sysfs describes the caches this machine (or virtual machine) has; the
// cpuid-based sysconf values can describe the host's (256 MiB for a 2-core VM).
int64_t sysfs_largest_cache_bytes() {
  int64_t largest = 0;
  for (int index = 0;; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream size_file(dir + "size"), type_file(dir + "type");
    if (!size_file) break;
    std::string type;
    int64_t size = 0;
    char unit = 0;
    if (!(type_file >> type) || type == "Instruction" || !(size_file >> size)) continue;
    size_file >> unit;
    largest = std::max(largest, size << (unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0));
  }
  return largest;
}

}  // namespace

const VecKernels& vec_kernels() {
  static const VecKernels* k = choose();
  return *k;
}

int64_t last_level_cache_bytes() {
  static const int64_t bytes = [] {
    const int64_t from_sysfs = sysfs_largest_cache_bytes();
    return from_sysfs > 0 ? from_sysfs : int64_t{32} << 20;
  }();
  return bytes;
}

}  // namespace tensorlet::cpu
