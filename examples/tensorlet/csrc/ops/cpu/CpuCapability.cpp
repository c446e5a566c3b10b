#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/Environment.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::cpu {
namespace {

// The widest variant TENSORLET_CPU_CAPABILITY allows (default, avx2 or avx512, any case;
// unset: avx512) that this build compiled and this CPU runs. A name that is not one of
// these is refused: taken as unset, a typo would silently measure the wrong kernels.
const VecKernels* choose() {
  const char* asked = std::getenv("TENSORLET_CPU_CAPABILITY");
  int widest = 2;  // 0 default, 1 avx2, 2 avx512
  if (asked && *asked) {
    widest = environment_word_is(asked, "default") ? 0 : environment_word_is(asked, "avx2") ? 1
             : environment_word_is(asked, "avx512") ? 2 : -1;
    TL_CHECK_VALUE(widest >= 0, "TENSORLET_CPU_CAPABILITY=", asked,
                   " is not a CPU capability: give default, avx2 or avx512 (the widest vector kernels to use; "
                   "a CPU without them gets its own widest), or unset it");
  }
#if defined(__x86_64__) && defined(TENSORLET_HAVE_AVX512_VARIANT)
  if (widest >= 2 && __builtin_cpu_supports("avx512f")) return vec_kernels_avx512();
#endif
#if defined(__x86_64__) && defined(TENSORLET_HAVE_AVX2_VARIANT)
  if (widest >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return vec_kernels_avx2();
#endif
  (void)widest;
  return vec_kernels_default();
}

// Linux's sysfs describes the caches this machine (or virtual machine) has, and which
// CPUs share each (shared_cpu_list, "0-3,8-11"). On a virtual machine the sizes can be
// the host's, as sysconf's (cpuid's) can: see kMaxCachePerCpu.
struct CacheInfo {
  int64_t bytes = 0;
  int64_t sharing_cpus = 1;
};

int64_t count_cpus(const std::string& list) {
  int64_t count = 0;
  std::istringstream ranges(list);
  for (std::string range; std::getline(ranges, range, ',');) {
    const size_t dash = range.find('-');
    try {
      count += dash == std::string::npos ? 1 : std::stoll(range.substr(dash + 1)) - std::stoll(range.substr(0, dash)) + 1;
    } catch (const std::exception&) {
      return 1;  // not the format Linux writes: count the reading CPU only
    }
  }
  return std::max<int64_t>(count, 1);
}

CacheInfo sysfs_largest_cache() {
  CacheInfo largest;
  for (int index = 0;; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream size_file(dir + "size"), type_file(dir + "type"), shared_file(dir + "shared_cpu_list");
    if (!size_file) break;
    std::string type, shared;
    int64_t size = 0;
    char unit = 0;
    if (!(type_file >> type) || type == "Instruction" || !(size_file >> size)) continue;
    size_file >> unit;
    size <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
    if (size > largest.bytes) largest = {size, (shared_file >> shared) ? count_cpus(shared) : 1};
  }
  return largest;
}

// No current processor has more than 6 MiB of last-level cache per hardware thread
// (AMD's V-Cache dies: 96 MiB for 16); a virtual machine's sysfs, though, shows the
// host's whole L3 shared by the guest's CPUs alone (260 MiB by 2 vCPUs on a cloud
// Xeon), and the host's other guests use that cache too. Above this share per CPU, the
// share is taken as this. On that 2-vCPU guest a chain of float32 ops (each result the
// next op's input) ran faster with streaming stores from 32 MiB of operands per op
// (0.89 x the time of plain stores; 0.70 x at 128 MiB) and slower up to 16 MiB (1.08 x).
constexpr int64_t kMaxCachePerCpu = int64_t{8} << 20;
// Where sysfs says nothing.
constexpr int64_t kUnknownCache = int64_t{32} << 20;

int64_t default_streaming_threshold() {
  const CacheInfo cache = sysfs_largest_cache();
  if (cache.bytes <= 0) return kUnknownCache;
  return std::min(cache.bytes, cache.sharing_cpus * kMaxCachePerCpu);
}

}  // namespace

const VecKernels& vec_kernels() {
  static const VecKernels* k = choose();
  return *k;
}

int64_t streaming_threshold_bytes() {
  static const int64_t bytes = environment_bytes("TENSORLET_STREAMING_THRESHOLD", default_streaming_threshold());
  return bytes;
}

}  // namespace tensorlet::cpu

// The threshold in bytes, or -1 where TENSORLET_STREAMING_THRESHOLD is not a size (an op
// then raises the ValueError). Exported for ctypes: tests read the value in use.
extern "C" __attribute__((visibility("default"))) int64_t tensorlet_streaming_threshold_bytes() {
  try {
    return tensorlet::cpu::streaming_threshold_bytes();
  } catch (const tensorlet::ValueError&) {
    return -1;
  }
}

// The name of the vector kernels in use (default, avx2 or avx512), or NULL where
// TENSORLET_CPU_CAPABILITY is not a capability (the ops raise the ValueError). For ctypes.
extern "C" __attribute__((visibility("default"))) const char* tensorlet_cpu_capability() {
  try {
    return tensorlet::cpu::vec_kernels().name;
  } catch (const tensorlet::ValueError&) {
    return nullptr;
  }
}
