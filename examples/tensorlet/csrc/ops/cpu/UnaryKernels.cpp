// The CPU (and Meta) kernels of the unary ops (TL_FORALL_UNARY_OPS): their bodies are
// ops/UnaryOps.h's functors, the ones the CUDA kernels run, and the contiguous runs of
// float32 and float64 the run-time selected SIMD kernels of the same ops (VecKernels.h).
// The compute dtype, torch's refusals and out= come from the shared layer
// (unary_iteration), as for ops/cuda/UnaryKernels.cu.
#include "generated/NativeFunctions.h"
#include "ops/Elementwise.h"
#include "ops/KernelVariants.h"
#include "ops/UnaryOps.h"
#include "ops/cpu/Loops.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::native {
namespace {

// The SIMD kernel of `op` for T's contiguous runs (none for the integer dtypes).
template <typename T>
auto simd_unary(UnaryOp op) {
  const auto& k = cpu::vec_kernels();
  if constexpr (std::is_same_v<T, float>) return k.unary_f32[static_cast<int>(op)];
  else if constexpr (std::is_same_v<T, double>) return k.unary_f64[static_cast<int>(op)];
  else return nullptr;
}

// Operands beyond what the caches keep (streaming_threshold_bytes): the result could not
// stay there for the next op and is written past them (as binary_contiguous decides for
// add and mul).
template <typename T>
bool stream_result(const LoopPlan& plan) {
  return 2 * plan.numel() * static_cast<int64_t>(sizeof(T)) > cpu::streaming_threshold_bytes();
}

Tensor unary(UnaryOp op, const Tensor& self, Tensor out) {
  UnaryIteration it = unary_iteration(op, self, std::move(out));
  const Device device = it.out.device();
  if (device.is_meta()) return it.out;
  TL_CHECK(device.is_cpu(), unary_name(op), ": no CPU kernel for device ", device.str());
  LoopPlan plan = make_loop_plan({&it.target, &it.a});
  TL_DISPATCH_ALL_TYPES(it.compute, unary_name(op), {
    ops::visit_unary<scalar_t>(op, [&](const auto& body) {
      auto simd = simd_unary<scalar_t>(op);
      if constexpr (std::is_same_v<decltype(simd), std::nullptr_t>) {
        cpu::unary_loop<scalar_t, scalar_t>(plan, body);
      } else {
        const bool stream = stream_result<scalar_t>(plan);
        cpu::unary_loop<scalar_t, scalar_t>(plan, body, [=](const scalar_t* a, scalar_t* out, int64_t n) {
          simd(a, out, n, stream);
        });
      }
    });
  });
  return it.finish();
}

}  // namespace

#define TL_CPU_UNARY(name, Enum, promotes) TL_UNARY_VARIANTS(impl, name, Enum)
TL_FORALL_UNARY_OPS(TL_CPU_UNARY)
#undef TL_CPU_UNARY

}  // namespace tensorlet::native
