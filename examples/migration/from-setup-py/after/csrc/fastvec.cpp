#include "fastvec/fastvec.h"

#include <cmath>

namespace fastvec {

double norm(const double* values, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += values[i] * values[i];
  return std::sqrt(total);
}

}  // namespace fastvec
