// The CUDA loops of the binary ops (add, sub, mul, div, maximum, eq, lt, gt) and of
// where: ops/BinaryOps.h's functors in the one elementwise kernel (Loops.cuh). Result
// dtypes, broadcasting, out= and in-place checks come from the shared layer
// (binary_iteration, where_iteration); dtypes reach the loops only through the
// TL_DISPATCH_* macros (test_cuda.py greps this folder for anything else).
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/BinaryOps.h"
#include "ops/Elementwise.h"
#include "ops/KernelVariants.h"
#include "ops/cuda/Loops.cuh"

namespace tensorlet::native {
namespace {

using cuda::check;
using cuda::launch_elementwise;

Tensor binary(BinaryOp op, const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
  BinaryIteration it = binary_iteration(op, self, other, alpha, std::move(out));
  TL_DISPATCH_ALL_TYPES(it.compute, binary_name(op), {
    ops::visit_binary<scalar_t>(op, alpha.to<scalar_t>(), [&](const auto& body) {
      launch_elementwise(body, it.target, it.a, it.b);
    });
  });
  check(cudaGetLastError(), binary_name(op));
  return it.finish();
}

}  // namespace

TL_BINARY_KERNELS(cuda)

Tensor where_cuda(const Tensor& condition, const Tensor& self, const Tensor& other) {
  WhereIteration it = where_iteration(condition, self, other);
  TL_DISPATCH_ALL_TYPES(it.out.dtype(), "where", {
    launch_elementwise(ops::Where<scalar_t>{}, it.out, it.condition, it.a, it.b);
  });
  check(cudaGetLastError(), "where");
  return it.out;
}

}  // namespace tensorlet::native
