#pragma once

#include <cstddef>

namespace fastvec {

// The Euclidean norm of values[0..n).
double norm(const double* values, std::size_t n);

}  // namespace fastvec
