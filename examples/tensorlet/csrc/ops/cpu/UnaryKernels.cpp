// The CPU (and Meta) kernels of the unary ops (TL_FORALL_UNARY_OPS): their bodies are
// ops/UnaryOps.h's functors, the ones the CUDA kernels run. The compute dtype, torch's
// refusals and out= come from the shared layer (unary_iteration), as for
// ops/cuda/UnaryKernels.cu.
#include "generated/NativeFunctions.h"
#include "ops/Elementwise.h"
#include "ops/KernelVariants.h"
#include "ops/UnaryOps.h"
#include "ops/cpu/Loops.h"

namespace tensorlet::native {
namespace {

Tensor unary(UnaryOp op, const Tensor& self, Tensor out) {
  UnaryIteration it = unary_iteration(op, self, std::move(out));
  const Device device = it.out.device();
  if (device.is_meta()) return it.out;
  TL_CHECK(device.is_cpu(), unary_name(op), ": no CPU kernel for device ", device.str());
  LoopPlan plan = make_loop_plan({&it.target, &it.a});
  TL_DISPATCH_ALL_TYPES(it.compute, unary_name(op), {
    ops::visit_unary<scalar_t>(op, [&](const auto& body) { cpu::unary_loop<scalar_t, scalar_t>(plan, body); });
  });
  return it.finish();
}

}  // namespace

#define TL_CPU_UNARY(name, Enum, promotes) TL_UNARY_VARIANTS(impl, name, Enum)
TL_FORALL_UNARY_OPS(TL_CPU_UNARY)
#undef TL_CPU_UNARY

}  // namespace tensorlet::native
