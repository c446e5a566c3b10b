#pragma once
// tensorlet's profiler (built with USE_TLPROF=ON into libtensorlet_profiler.so).
// While enabled on a thread, every top-level operator call made on that thread
// is timed by a fallback on the Profiler dispatch key.
#include <cstdint>
#include <string>
#include <vector>

namespace tensorlet::profiler {

struct OpStat {
  std::string name;     // "tensorlet::add.Tensor"
  uint64_t calls = 0;
  double total_us = 0;  // wall time inside the op, children included
};

void enable();   // for the calling thread
void disable();
bool is_enabled();
void reset();
std::vector<OpStat> stats();  // sorted by total time, largest first

// Times a scope and adds it to the statistics under `name`.
class RecordScope {
 public:
  explicit RecordScope(std::string name);
  ~RecordScope();
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

 private:
  std::string name_;
  int64_t start_ns_;
};

}  // namespace tensorlet::profiler

// C entry points for ctypes (tensorlet.profiler uses these).
extern "C" {
void tlprof_enable(void);
void tlprof_disable(void);
void tlprof_reset(void);
// JSON array of {"name", "calls", "total_us"}; valid until the next call.
const char* tlprof_report_json(void);
}
