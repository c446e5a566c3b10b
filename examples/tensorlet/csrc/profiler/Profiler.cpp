#include "profiler/Profiler.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "dispatch/Library.h"

namespace tensorlet::profiler {
namespace {

std::mutex g_mutex;
std::unordered_map<std::string, OpStat> g_stats;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void time_and_redispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  RecordScope scope(op.name());
  ExcludeDispatchKeyGuard below(DispatchKeySet(DispatchKey::Profiler));
  Dispatcher::singleton().redispatch(op, keys & DispatchKeySet::below(DispatchKey::Profiler), stack);
}

}  // namespace

RecordScope::RecordScope(std::string name) : name_(std::move(name)), start_ns_(now_ns()) {}

RecordScope::~RecordScope() {
  double us = static_cast<double>(now_ns() - start_ns_) / 1000.0;
  std::lock_guard<std::mutex> lock(g_mutex);
  OpStat& s = g_stats[name_];
  s.name = name_;
  s.calls += 1;
  s.total_us += us;
}

void enable() {
  auto& local = local_dispatch_keys();
  local.included = local.included | DispatchKeySet(DispatchKey::Profiler);
}

void disable() {
  auto& local = local_dispatch_keys();
  local.included = local.included - DispatchKeySet(DispatchKey::Profiler);
}

bool is_enabled() { return local_dispatch_keys().included.has(DispatchKey::Profiler); }

void reset() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_stats.clear();
}

std::vector<OpStat> stats() {
  std::vector<OpStat> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto& [name, s] : g_stats) out.push_back(s);
  }
  std::sort(out.begin(), out.end(), [](const OpStat& a, const OpStat& b) { return a.total_us > b.total_us; });
  return out;
}

TENSORLET_LIBRARY_FALLBACK(Profiler, m) { m.fallback(&time_and_redispatch, "profiler_timer"); }

}  // namespace tensorlet::profiler

extern "C" {
void tlprof_enable(void) { tensorlet::profiler::enable(); }
void tlprof_disable(void) { tensorlet::profiler::disable(); }
void tlprof_reset(void) { tensorlet::profiler::reset(); }
const char* tlprof_report_json(void) {
  static thread_local std::string json;
  std::ostringstream s;
  s << "[";
  bool first = true;
  for (const auto& st : tensorlet::profiler::stats()) {
    s << (first ? "" : ", ") << "{\"name\": \"" << st.name << "\", \"calls\": " << st.calls
      << ", \"total_us\": " << st.total_us << "}";
    first = false;
  }
  s << "]";
  json = s.str();
  return json.c_str();
}
}
