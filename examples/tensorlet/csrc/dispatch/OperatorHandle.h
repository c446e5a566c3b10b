#pragma once
// What callers hold for an operator: a stable pointer to its OperatorEntry (entries
// are never removed), with read-only queries for tests and introspection.
#include <string>

#include "dispatch/OperatorEntry.h"

namespace tensorlet {

class OperatorHandle {
 public:
  explicit OperatorHandle(OperatorEntry* e) : entry_(e) {}
  const std::string& name() const { return entry_->name; }
  const FunctionSchema& schema() const;
  bool has_schema() const { return entry_->schema.has_value(); }
  // The kernel a call with `keys` would run (for tests and introspection).
  const KernelFunction& kernel_for(DispatchKey k) const { return entry_->table[static_cast<int>(k)]; }
  bool has_kernel_registered(DispatchKey k) const { return entry_->kernels[static_cast<int>(k)].has_value(); }
  OperatorEntry* entry() const { return entry_; }

 private:
  OperatorEntry* entry_;
};

}  // namespace tensorlet
