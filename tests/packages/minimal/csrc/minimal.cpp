#include "minimal/minimal.h"

namespace minimal {

double sum(const double* values, std::size_t n) {
#if MINIMAL_FAST_SUM
  // Four accumulators break the add dependency chain so the loop vectorises.
  double acc[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) acc[k] += values[i + k];
  double total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; i < n; ++i) total += values[i];
  return total;
#else
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += values[i];
  return total;
#endif
}

double dot(const double* a, const double* b, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += a[i] * b[i];
  return total;
}

const char* build_flavour() {
#if MINIMAL_FAST_SUM
  return "fast-sum";
#else
  return "plain";
#endif
}

}  // namespace minimal
