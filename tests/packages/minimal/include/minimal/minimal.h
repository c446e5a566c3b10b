#pragma once
#include <cstddef>

namespace minimal {
// Sum of n doubles; vectorised when built with USE_FAST_SUM.
double sum(const double* values, std::size_t n);
// Dot product of two arrays of n doubles.
double dot(const double* a, const double* b, std::size_t n);
const char* build_flavour();
}  // namespace minimal
