#pragma once
// The Tracing key has no kernels, only a fallback that records each call
// ("tensorlet::add.Tensor(float32[2, 3], float32[3], 1)") and redispatches.
// Enabling it adds the key to the calling thread's included set.
#include <string>
#include <vector>

namespace tensorlet {
void set_tracing_enabled(bool enabled);
bool tracing_enabled();
std::vector<std::string> take_tracing_log();  // returns and clears
}  // namespace tensorlet
