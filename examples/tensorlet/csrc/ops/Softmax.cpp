// softmax / log_softmax: what every backend shares (ops/Softmax.h); the CPU's fused
// rows are in ops/cpu/SoftmaxKernels.cpp.
#include "ops/Softmax.h"

#include "generated/Functions.h"
#include "ops/TensorIterator.h"

namespace tensorlet::native {

SoftmaxIteration softmax_iteration(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  // torch: dtype= casts first; without it a bool or integer input is refused, as torch's
  // kernels refuse it ("softmax_lastdim_kernel_impl" not implemented for 'Long').
  TL_CHECK(dtype || is_floating_type(self.dtype()), "softmax/log_softmax: not implemented for '",
           scalar_type_name(self.dtype()), "' (a floating point input, or dtype=, is needed)");
  const ScalarType dt = dtype ? *dtype : self.dtype();
  TL_CHECK(is_floating_type(dt), "softmax/log_softmax: not implemented for '", scalar_type_name(dt),
           "' (dtype= must be a floating point type)");
  SoftmaxIteration it;
  it.dim = wrap_dim(dim, self.dim());
  it.out = empty_tensor(self.sizes(), dt, self.device());
  if (!self.device().is_meta()) it.input = cast_to(self, dt);
  return it;
}

SoftmaxRows softmax_rows(const SoftmaxIteration& it) {
  const Tensor& self = it.input;
  const int64_t d = it.dim, last = std::max<int64_t>(self.dim(), 1) - 1;
  SoftmaxRows r;
  r.direct = d == last && self.is_contiguous();
  r.in = r.direct ? self : tensorlet::contiguous(tensorlet::transpose(self, d, last));
  r.out = r.direct ? it.out : empty_tensor(r.in.sizes(), it.out.dtype(), it.out.device());
  r.cols = self.dim() == 0 ? 1 : self.size(d);
  r.rows = r.cols == 0 ? 0 : it.out.numel() / r.cols;
  return r;
}

void SoftmaxRows::finish(const SoftmaxIteration& it) const {
  if (!direct) tensorlet::copy_(tensorlet::transpose(it.out, it.dim, std::max<int64_t>(it.out.dim(), 1) - 1), out, false);
}

}  // namespace tensorlet::native
