#pragma once
#include <cstdint>
#include <optional>

#include "core/ScalarType.h"

namespace tensorlet {
// Seeds the generator behind rand/randn (tensorlet.manual_seed): the CPU's engine and the
// CUDA backend's Philox stream (its key, and its counter back to 0), as torch.manual_seed
// seeds every device's generator. The two backends' streams differ, as torch's do.
void manual_seed(uint64_t seed);

// A counter-based generator's share of the default generator's state: the key (the seed)
// and the first of `counters` consecutive counters reserved for one call, so the next
// call draws fresh numbers and a seed repeats a sequence.
struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};
PhiloxState reserve_philox_counters(uint64_t counters);

namespace native {
// rand/randn's dtype: the default float unless given; anything else than a float refused.
ScalarType random_dtype(const char* name, const std::optional<ScalarType>& dtype);
}  // namespace native
}  // namespace tensorlet
