// The CPU (and Meta) kernels of fill_ and copy_ (dtype-converting, any layouts), as
// ops/cuda/CopyKernels.cu is CUDA's.
#include <algorithm>
#include <cstring>

#include "generated/NativeFunctions.h"
#include "ops/TensorIterator.h"
#include "ops/cpu/Loops.h"

namespace tensorlet::cpu {
namespace {

template <typename dst_t>
void copy_from(const LoopPlan& plan, ScalarType src_type) {
  TL_DISPATCH_ALL_TYPES(src_type, "copy_", {
    unary_loop<dst_t, scalar_t>(plan, [](scalar_t v) { return static_cast<dst_t>(v); });
  });
}

// dst = src converted to dst's dtype; both have the same shape.
void copy_kernel(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() && dst.sizes() == src.sizes()) {
    if (dst.data_ptr() != src.data_ptr())
      std::memmove(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(dst.numel()) * element_size(dst.dtype()));
    return;
  }
  LoopPlan plan = make_loop_plan({&dst, &src});
  TL_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", { copy_from<scalar_t>(plan, src.dtype()); });
}

void fill_kernel(const Tensor& dst, const Scalar& value) {
  if (dst.numel() == 0) return;
  LoopPlan plan = make_loop_plan({&dst});
  TL_DISPATCH_ALL_TYPES(dst.dtype(), "fill_", {
    const scalar_t v = value.to<scalar_t>();
    const int64_t sizes[] = {sizeof(scalar_t)};
    cpu_parallel_for_each(plan, sizes, [v](char** d, const int64_t* s, int64_t n) {
      scalar_t* out = reinterpret_cast<scalar_t*>(d[0]);
      if (s[0] == 1) std::fill(out, out + n, v);
      else for (int64_t i = 0; i < n; ++i) out[i * s[0]] = v;
    });
  });
}

}  // namespace
}  // namespace tensorlet::cpu

namespace tensorlet::native {

Tensor fill_impl_(const Tensor& self, const Scalar& value) {
  if (self.device().is_cpu()) cpu::fill_kernel(self, value);
  return self;
}

Tensor copy_impl_(const Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  Tensor expanded = expand_view(src, self.sizes());
  if (self.device().is_meta() || src.device().is_meta()) return self;
  TL_CHECK(self.device().is_cpu() && src.device().is_cpu(), "copy_: no CPU path from ", src.device().str(), " to ",
           self.device().str());
  cpu::copy_kernel(self, expanded);
  return self;
}

}  // namespace tensorlet::native
