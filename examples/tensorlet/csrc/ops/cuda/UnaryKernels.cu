// The CUDA loops of the unary ops (TL_FORALL_UNARY_OPS): ops/UnaryOps.h's functors in
// the one elementwise kernel (Loops.cuh). The compute dtype, torch's refusals and out=
// come from the shared layer (unary_iteration).
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Elementwise.h"
#include "ops/KernelVariants.h"
#include "ops/UnaryOps.h"
#include "ops/cuda/Loops.cuh"

namespace tensorlet::native {
namespace {

Tensor unary(UnaryOp op, const Tensor& self, Tensor out) {
  UnaryIteration it = unary_iteration(op, self, std::move(out));
  TL_DISPATCH_ALL_TYPES(it.compute, unary_name(op), {
    ops::visit_unary<scalar_t>(op, [&](const auto& body) { cuda::launch_elementwise(body, it.target, it.a); });
  });
  cuda::check(cudaGetLastError(), unary_name(op));
  return it.finish();
}

}  // namespace

#define TL_CUDA_UNARY(name, Enum, promotes) TL_UNARY_VARIANTS(cuda, name, Enum)
TL_FORALL_UNARY_OPS(TL_CUDA_UNARY)
#undef TL_CUDA_UNARY

}  // namespace tensorlet::native
