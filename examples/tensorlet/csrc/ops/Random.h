#pragma once
#include <cstdint>

namespace tensorlet {
// Seeds the generator behind rand/randn (tensorlet.manual_seed).
void manual_seed(uint64_t seed);
}  // namespace tensorlet
