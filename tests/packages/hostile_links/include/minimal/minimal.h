#pragma once
// The test package's C++ core.  Definition order in minimal.cpp matters to
// test_cli.py's prioritized-text test: sum, then dot, then build_flavour.
#include <cstddef>

namespace minimal {
double sum(const double* values, std::size_t n);
double dot(const double* a, const double* b, std::size_t n);
const char* build_flavour();  // "fast-sum" or "plain": tells the tests which USE_FAST_SUM was built
}  // namespace minimal
