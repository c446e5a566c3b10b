// Unary math, dtype-converting copies and fills. The unary ops' bodies are
// ops/UnaryOps.h's functors, the ones the CUDA kernels run.
#include <cstring>

#include "ops/Elementwise.h"
#include "ops/UnaryOps.h"
#include "ops/cpu/Loops.h"

namespace tensorlet::cpu {
namespace {

template <typename dst_t>
void copy_from(const LoopPlan& plan, ScalarType src_type) {
  TL_DISPATCH_ALL_TYPES(src_type, "copy_", {
    unary_loop<dst_t, scalar_t>(plan, [](scalar_t v) { return static_cast<dst_t>(v); });
  });
}

}  // namespace

void unary_kernel(UnaryOp op, const Tensor& out, const Tensor& a) {
  LoopPlan plan = make_loop_plan({&out, &a});
  TL_DISPATCH_ALL_TYPES(a.dtype(), unary_name(op), {
    ops::visit_unary<scalar_t>(op, [&](const auto& body) { unary_loop<scalar_t, scalar_t>(plan, body); });
  });
}

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

}  // namespace tensorlet::cpu
