// A separately built C++ extension: defines a new op `myext::scale`, gives it a
// CPU kernel, and overrides the CPU kernel of tensorlet::sign.
#include <tensorlet/tensorlet.h>

using namespace tensorlet;

namespace {

void scale_cpu(const OperatorHandle&, DispatchKeySet, Stack* stack) {
  double factor = stack->back().to_double();
  Tensor self = (*stack)[stack->size() - 2].to_tensor();
  drop(stack, 2);
  stack->emplace_back(self * Scalar(factor));
}

void sign_always_seven(const OperatorHandle&, DispatchKeySet, Stack* stack) {
  Tensor self = stack->back().to_tensor();
  drop(stack, 1);
  stack->emplace_back(full(self.sizes(), Scalar(7), self.dtype()));
}

}  // namespace

TENSORLET_LIBRARY(myext, m) { m.def("scale(Tensor self, float factor=2.0) -> Tensor"); }
TENSORLET_LIBRARY_IMPL(myext, CPU, m) { m.impl("scale", &scale_cpu, "scale_cpu"); }
TENSORLET_LIBRARY_IMPL(tensorlet, CPU, m) { m.impl("sign", &sign_always_seven, "sign_always_seven"); }
