#include "dispatch/LocalDispatchKeySet.h"

namespace tensorlet {

LocalDispatchKeySet& local_dispatch_keys() {
  thread_local LocalDispatchKeySet keys;
  return keys;
}

}  // namespace tensorlet
