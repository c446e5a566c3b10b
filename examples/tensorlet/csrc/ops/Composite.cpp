// CompositeImplicitAutograd kernels: written only in terms of other ops, so they
// run on every backend and autograd differentiates through them.
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/TensorOperators.h"

namespace tensorlet::native {
namespace {

Tensor as_floating(const Tensor& self, const std::optional<ScalarType>& dtype) {
  if (dtype) return tensorlet::to(self, *dtype, std::nullopt, false);
  return is_floating_type(self.dtype()) ? self : tensorlet::to(self, kDefaultFloat, std::nullopt, false);
}

}  // namespace

// Shifting by the (detached) max keeps exp() from overflowing; the shift
// cancels in the result so it needs no gradient.
Tensor softmax_int_composite(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  Tensor x = as_floating(self, dtype);
  Tensor shifted = x - tensorlet::detach(tensorlet::amax(x, {dim}, true));
  Tensor e = tensorlet::exp(shifted);
  return e / tensorlet::sum(e, std::vector<int64_t>{dim}, true, std::nullopt);
}

Tensor log_softmax_int_composite(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  Tensor x = as_floating(self, dtype);
  Tensor shifted = x - tensorlet::detach(tensorlet::amax(x, {dim}, true));
  return shifted - tensorlet::log(tensorlet::sum(tensorlet::exp(shifted), std::vector<int64_t>{dim}, true, std::nullopt));
}

}  // namespace tensorlet::native
