// The CPU (and Meta) kernels of the binary ops (add, sub, mul, div, maximum, eq, lt, gt)
// and of where: their bodies are ops/BinaryOps.h's functors, the ones the CUDA kernels
// run (visit_binary), and their contiguous float32 add/mul the SIMD kernels. Result
// dtypes, broadcasting, out= and in-place checks come from the shared layer
// (binary_iteration, where_iteration), as for ops/cuda/BinaryKernels.cu.
#include "generated/NativeFunctions.h"
#include "ops/BinaryOps.h"
#include "ops/Elementwise.h"
#include "ops/KernelVariants.h"
#include "ops/TensorIterator.h"
#include "ops/cpu/Loops.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::cpu {
namespace {

bool all_contiguous(const Tensor& out, const Tensor& a, const Tensor& b) {
  return out.is_contiguous() && a.is_contiguous() && b.is_contiguous();
}

// `out` has the result dtype (bool for comparisons) and the broadcast shape; `a`/`b`
// have the compute dtype and are already expanded to it.
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

// All four operands have the broadcast shape; `a`, `b` and `out` the result dtype.
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

}  // namespace
}  // namespace tensorlet::cpu

namespace tensorlet::native {
namespace {

// Writes op(self, other) into `out` (allocated when undefined) and returns it.
Tensor binary(BinaryOp op, const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
  // The common case first: two CPU float tensors of one dtype and shape, a new
  // result. Nothing to promote, broadcast or cast, so binary_iteration's work is skipped.
  if (!out.defined() && !alpha.is_bool() && self.dtype() == other.dtype() && is_floating_type(self.dtype()) &&
      self.device().is_cpu() && other.device().is_cpu() && self.sizes() == other.sizes()) {
    out = empty_tensor(self.sizes(), is_comparison(op) ? ScalarType::Bool : self.dtype(), self.device());
    cpu::binary_kernel(op, out, self, other, alpha);
    return out;
  }
  BinaryIteration it = binary_iteration(op, self, other, alpha, std::move(out));
  const Device device = it.out.device();
  if (device.is_meta()) return it.out;
  TL_CHECK(device.is_cpu(), binary_name(op), ": no CPU kernel for device ", device.str());
  cpu::binary_kernel(op, it.target, it.a, it.b, alpha);
  return it.finish();
}

}  // namespace

TL_BINARY_KERNELS(impl)

Tensor where_impl(const Tensor& condition, const Tensor& self, const Tensor& other) {
  WhereIteration it = where_iteration(condition, self, other);
  if (it.out.device().is_meta()) return it.out;
  cpu::where_kernel(it.out, it.condition, it.a, it.b);
  return it.out;
}

}  // namespace tensorlet::native
