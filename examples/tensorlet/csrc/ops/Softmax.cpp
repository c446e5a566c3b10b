// softmax / log_softmax: what every backend shares (ops/Softmax.h); the CPU's fused
// rows are in ops/cpu/SoftmaxKernels.cpp.
#include "ops/Softmax.h"

#include "ops/TensorIterator.h"

namespace tensorlet::native {

SoftmaxIteration softmax_iteration(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  // torch: integer inputs give the default float dtype; dtype= casts first.
  const ScalarType dt = dtype ? *dtype : is_floating_type(self.dtype()) ? self.dtype() : kDefaultFloat;
  SoftmaxIteration it;
  it.dim = wrap_dim(dim, self.dim());
  it.out = empty_tensor(self.sizes(), dt, self.device());
  if (!self.device().is_meta()) it.input = cast_to(self, dt);
  return it;
}

}  // namespace tensorlet::native
