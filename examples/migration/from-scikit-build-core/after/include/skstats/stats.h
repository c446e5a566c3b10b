#pragma once

#include <cstddef>

namespace skstats {

double mean(const double* values, std::size_t n);
double variance(const double* values, std::size_t n);  // population variance
const char* variant();                                  // "one-pass" or "two-pass"

}  // namespace skstats
