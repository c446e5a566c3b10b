// The CPU (and Meta) kernels of softmax / log_softmax: one fused pass per row (max, exp
// and sum, scale) in the run-time selected vector kernels, instead of five ops and four
// temporaries. The reduced dim is made the contiguous last one first when it is not.
// The result dtype and the result come from the shared layer (softmax_iteration).
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Softmax.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::native {
namespace {

Tensor softmax_common(const Tensor& self, int64_t dim, const std::optional<ScalarType>& dtype, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  SoftmaxIteration it = softmax_iteration(self, dim, dtype);
  const Tensor& out = it.out;
  if (!it.input.defined() || out.numel() == 0) return out;  // Meta, or nothing to compute
  TL_CHECK(out.device().is_cpu(), name, ": no CPU kernel for device ", out.device().str());
  const int64_t d = it.dim, last = std::max<int64_t>(self.dim(), 1) - 1;
  const bool direct = d == last && it.input.is_contiguous();
  // Rows along the last dim: a transposed contiguous copy when `d` is another dim.
  Tensor rows_in = direct ? it.input : tensorlet::contiguous(tensorlet::transpose(it.input, d, last));
  Tensor rows_out = direct ? out : empty_tensor(rows_in.sizes(), out.dtype(), out.device());
  const int64_t cols = self.dim() == 0 ? 1 : self.size(d), rows = out.numel() / cols;
  TL_DISPATCH_FLOAT_TYPES(out.dtype(), name, {
    if constexpr (std::is_same_v<scalar_t, float>)
      cpu::vec_kernels().softmax_f32(rows_in.data<float>(), rows_out.data<float>(), rows, cols, log);
    else
      cpu::vec_kernels().softmax_f64(rows_in.data<double>(), rows_out.data<double>(), rows, cols, log);
  });
  if (!direct) tensorlet::copy_(tensorlet::transpose(out, d, last), rows_out, false);
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
