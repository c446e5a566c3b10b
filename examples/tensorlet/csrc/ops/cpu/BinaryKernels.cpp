// The binary ops and where: their bodies are ops/BinaryOps.h's functors, the ones the
// CUDA kernels run (visit_binary), and their contiguous float32 add/mul the SIMD kernels.
#include "ops/BinaryOps.h"
#include "ops/Elementwise.h"
#include "ops/cpu/Loops.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::cpu {
namespace {

bool all_contiguous(const Tensor& out, const Tensor& a, const Tensor& b) {
  return out.is_contiguous() && a.is_contiguous() && b.is_contiguous();
}

}  // namespace

void binary_kernel(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  // Contiguous float32 add/mul go to the run-time selected SIMD kernels.
  if (a.dtype() == ScalarType::Float && all_contiguous(out, a, b) && a.sizes() == b.sizes() &&
      a.strides() == b.strides() && (op == BinaryOp::Mul || (op == BinaryOp::Add && alpha.equals(1)))) {
    const auto& k = vec_kernels();
    (op == BinaryOp::Add ? k.add_f32 : k.mul_f32)(a.data<float>(), b.data<float>(), out.data<float>(), out.numel());
    return;
  }
  LoopPlan plan = make_loop_plan({&out, &a, &b});
  TL_DISPATCH_ALL_TYPES(a.dtype(), binary_name(op), {
    ops::visit_binary<scalar_t>(op, alpha.to<scalar_t>(), [&](const auto& body) {
      using Out = decltype(body(scalar_t{}, scalar_t{}));  // bool for the comparisons
      binary_loop<Out, scalar_t>(plan, body);
    });
  });
}

void where_kernel(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  LoopPlan plan = make_loop_plan({&out, &cond, &a, &b});
  TL_DISPATCH_ALL_TYPES(out.dtype(), "where", {
    const int64_t sizes[] = {sizeof(scalar_t), 1, sizeof(scalar_t), sizeof(scalar_t)};
    const ops::Where<scalar_t> body{};
    cpu_parallel_for_each(plan, sizes, [&body](char** d, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *at<scalar_t>(d[0], i, s[0]) =
            body(*at<bool>(d[1], i, s[1]), *at<scalar_t>(d[2], i, s[2]), *at<scalar_t>(d[3], i, s[3]));
    });
  });
}

}  // namespace tensorlet::cpu
