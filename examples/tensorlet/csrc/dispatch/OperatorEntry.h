#pragma once
// One operator's registration record: its schema, the kernels registered per
// dispatch key, and the dispatch table the Dispatcher derives from them (indexed
// by runtime key, so a call is one array lookup).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/DispatchKey.h"
#include "dispatch/Schema.h"

namespace tensorlet {

class OperatorHandle;
using BoxedKernelFn = void (*)(const OperatorHandle& op, DispatchKeySet keys, Stack* stack);

struct KernelFunction {
  BoxedKernelFn fn = nullptr;
  std::string name;  // for introspection: "add_impl", "fallback(Tracing)"...
};

struct OperatorEntry {
  std::string name;  // "tensorlet::add.Tensor"
  std::optional<FunctionSchema> schema;
  std::array<std::optional<KernelFunction>, kNumDispatchKeys> kernels;
  std::array<KernelFunction, kNumRuntimeKeys> table;
  // Derived from the schema, used on every call.
  std::vector<int> tensor_args, device_args, mutable_args;
  size_t num_args = 0;
};

}  // namespace tensorlet
