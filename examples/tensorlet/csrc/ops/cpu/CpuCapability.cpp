#include <cstdlib>
#include <cstring>

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

}  // namespace

const VecKernels& vec_kernels() {
  static const VecKernels* k = choose();
  return *k;
}

}  // namespace tensorlet::cpu
