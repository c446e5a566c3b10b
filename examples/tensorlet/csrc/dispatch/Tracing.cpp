#include "dispatch/Tracing.h"

#include <mutex>
#include <sstream>

#include "dispatch/Library.h"

namespace tensorlet {
namespace {

std::mutex g_log_mutex;
std::vector<std::string> g_log;

std::string describe(const IValue& v) {
  std::ostringstream s;
  switch (v.tag()) {
    case IValue::Tag::Tensor: return v.to_tensor().describe();
    case IValue::Tag::Double: s << v.to_double(); return s.str();
    case IValue::Tag::Int: return std::to_string(v.to_int());
    case IValue::Tag::Bool: return v.to_bool() ? "True" : "False";
    case IValue::Tag::IntList: return shape_str(v.to_int_list());
    case IValue::Tag::ScalarType: return scalar_type_name(v.to_scalar_type());
    case IValue::Tag::Device: return v.to_device().str();
    case IValue::Tag::None: return "None";
  }
  return "?";
}

void trace_and_redispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
  size_t n = op.schema().arguments.size();
  std::string line = op.name() + "(";
  for (size_t i = 0; i < n; ++i) line += (i ? ", " : "") + describe((*stack)[stack->size() - n + i]);
  line += ")";
  {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    g_log.push_back(std::move(line));
  }
  // Ops called from inside this one are implementation details: don't log them.
  ExcludeDispatchKeyGuard below(DispatchKeySet(DispatchKey::Tracing));
  Dispatcher::singleton().redispatch(op, keys & DispatchKeySet::below(DispatchKey::Tracing), stack);
}

}  // namespace

void set_tracing_enabled(bool enabled) {
  auto& local = local_dispatch_keys();
  local.included = enabled ? local.included | DispatchKeySet(DispatchKey::Tracing)
                           : local.included - DispatchKeySet(DispatchKey::Tracing);
}

bool tracing_enabled() { return local_dispatch_keys().included.has(DispatchKey::Tracing); }

std::vector<std::string> take_tracing_log() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  std::vector<std::string> out;
  out.swap(g_log);
  return out;
}

TENSORLET_LIBRARY_FALLBACK(Tracing, m) { m.fallback(&trace_and_redispatch, "trace_and_redispatch"); }

}  // namespace tensorlet
