#include "skstats/stats.h"

namespace skstats {

double mean(const double* values, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += values[i];
  return n ? total / static_cast<double>(n) : 0.0;
}

double variance(const double* values, std::size_t n) {
  if (n == 0) return 0.0;
#if SKSTATS_FAST
  // Welford's one-pass update.
  double m = 0, m2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double delta = values[i] - m;
    m += delta / static_cast<double>(i + 1);
    m2 += delta * (values[i] - m);
  }
  return m2 / static_cast<double>(n);
#else
  const double m = mean(values, n);
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += (values[i] - m) * (values[i] - m);
  return total / static_cast<double>(n);
#endif
}

const char* variant() {
#if SKSTATS_FAST
  return "one-pass";
#else
  return "two-pass";
#endif
}

}  // namespace skstats
