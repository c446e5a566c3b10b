// softmax / log_softmax along one dim: one fused pass per row (max, exp and sum,
// scale) in the run-time selected vector kernels, instead of five ops and four
// temporaries. The reduced dim is made the contiguous last one first when it is not.
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Elementwise.h"
#include "ops/TensorIterator.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::native {
namespace {

Tensor softmax_common(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  // torch: integer inputs give the default float dtype; dtype= casts first.
  const ScalarType dt = dtype ? *dtype : is_floating_type(self.dtype()) ? self.dtype() : kDefaultFloat;
  const int64_t d = wrap_dim(dim, self.dim());
  Tensor out = empty_tensor(self.sizes(), dt, self.device());
  if (self.device().is_meta() || out.numel() == 0) return out;
  TL_CHECK(self.device().is_cpu(), name, ": no CPU kernel for device ", self.device().str());
  const int64_t last = std::max<int64_t>(self.dim(), 1) - 1;
  Tensor x = cast_to(self, dt);
  const bool direct = d == last && x.is_contiguous();
  // Rows along the last dim: a transposed contiguous copy when `d` is another dim.
  Tensor rows_in = direct ? x : tensorlet::contiguous(tensorlet::transpose(x, d, last));
  Tensor rows_out = direct ? out : empty_tensor(rows_in.sizes(), dt, self.device());
  const int64_t cols = self.dim() == 0 ? 1 : self.size(d), rows = out.numel() / cols;
  TL_DISPATCH_FLOAT_TYPES(dt, name, {
    if constexpr (std::is_same_v<scalar_t, float>)
      cpu::vec_kernels().softmax_f32(rows_in.data<float>(), rows_out.data<float>(), rows, cols, log);
    else
      cpu::vec_kernels().softmax_f64(rows_in.data<double>(), rows_out.data<double>(), rows, cols, log);
  });
  if (!direct) cpu::copy_kernel(tensorlet::transpose(out, d, last), rows_out);
  return out;
}

}  // namespace

Tensor softmax_impl(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return softmax_common(self, dim, dtype, false);
}

Tensor log_softmax_impl(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype) {
  return softmax_common(self, dim, dtype, true);
}

}  // namespace tensorlet::native
