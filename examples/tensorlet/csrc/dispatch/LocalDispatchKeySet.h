#pragma once
// Thread-local keys added to / removed from every call's key set, and the guard a
// kernel uses to "redispatch below" itself (PyTorch's LocalDispatchKeySet).
#include "dispatch/DispatchKey.h"

namespace tensorlet {

struct LocalDispatchKeySet {
  DispatchKeySet included;
  DispatchKeySet excluded;
};
LocalDispatchKeySet& local_dispatch_keys();

// RAII: exclude `keys` for the current thread.
class ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet keys) : saved_(local_dispatch_keys().excluded) {
    local_dispatch_keys().excluded = saved_ | keys;
  }
  ~ExcludeDispatchKeyGuard() { local_dispatch_keys().excluded = saved_; }

 private:
  DispatchKeySet saved_;
};

}  // namespace tensorlet
