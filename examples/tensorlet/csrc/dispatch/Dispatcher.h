#pragma once
// The operator registry. Each operator keeps the kernels registered per dispatch
// key plus a dispatch table indexed by runtime key; the table is recomputed
// whenever a kernel or fallback registers, so a call is one array lookup.
//
// Resolution for a runtime key K (PyTorch's OperatorEntry order):
//   1. a kernel registered for K
//   2. CompositeExplicitAutograd            (backend keys)
//   3. CompositeImplicitAutograd            (backend keys; for Autograd only when
//                                            the op has no backend/explicit kernel)
//   4. the Autograd alias                   (we have one autograd key, so this is 1.)
//   5. the fallback registered for K
//   6. an error kernel: "no kernel for op X on key K"
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/DispatchKey.h"
#include "dispatch/LocalDispatchKeySet.h"
#include "dispatch/OperatorEntry.h"
#include "dispatch/OperatorHandle.h"
#include "dispatch/Schema.h"

namespace tensorlet {

class Dispatcher {
 public:
  static Dispatcher& singleton();

  void def(const std::string& schema, const std::string& ns, const std::string& debug);
  void impl(const std::string& qualified_name, DispatchKey key, KernelFunction kernel);
  void fallback(DispatchKey key, KernelFunction kernel);

  OperatorHandle find_or_throw(const std::string& qualified_name);
  std::optional<OperatorHandle> find(const std::string& qualified_name);
  std::vector<std::string> operator_names();
  bool has_fallback(DispatchKey key) const { return fallbacks_[static_cast<int>(key)].has_value(); }

  // Runs `op` on the arguments at the top of `stack` and leaves its results there.
  void call(const OperatorHandle& op, Stack* stack);
  // Runs the kernel for the highest key of `keys` (kernels use it to go below themselves).
  void redispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack);
  DispatchKeySet compute_keys(const OperatorEntry& e, const Stack& stack) const;

 private:
  OperatorEntry& entry_locked(const std::string& name);
  void update_table(OperatorEntry& e);

  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<OperatorEntry>> operators_;
  std::array<std::optional<KernelFunction>, kNumRuntimeKeys> fallbacks_;
};

}  // namespace tensorlet
