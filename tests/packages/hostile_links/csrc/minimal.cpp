#include "minimal/minimal.h"

#include <numeric>

namespace minimal {

#if MINIMAL_FAST_SUM
static constexpr const char* kFlavour = "fast-sum";
#else
static constexpr const char* kFlavour = "plain";
#endif

double sum(const double* values, std::size_t n) {
  // Pairwise halves under MINIMAL_FAST_SUM: a different code path for the same result,
  // so a cache-driven option change visibly recompiles this file.
#if MINIMAL_FAST_SUM
  if (n > 8) return sum(values, n / 2) + sum(values + n / 2, n - n / 2);
#endif
  return std::accumulate(values, values + n, 0.0);
}

double dot(const double* a, const double* b, std::size_t n) { return std::inner_product(a, a + n, b, 0.0); }

const char* build_flavour() { return kFlavour; }

}  // namespace minimal
