#pragma once
// arange prepared once for every backend: the dtype and element count rules (torch's),
// which each backend's loop then fills, element i = start + i * step.
#include <optional>

#include "core/Scalar.h"
#include "core/ScalarType.h"

namespace tensorlet::native {

struct ArangeSpec {
  ScalarType dtype;
  int64_t n = 0;
  bool floating = false;          // any bound or the step a float: computed in double
  double start = 0, step = 0;     // the floating rule
  int64_t start_int = 0, step_int = 0;  // the integer rule
};
ArangeSpec arange_spec(const Scalar& start, const Scalar& end, const Scalar& step,
                       const std::optional<ScalarType>& dtype);

}  // namespace tensorlet::native
