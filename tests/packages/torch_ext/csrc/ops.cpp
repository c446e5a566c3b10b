#include <torch/library.h>
#include <ATen/ATen.h>

namespace {
at::Tensor scale(const at::Tensor& x, double factor) { return x * factor; }
}  // namespace

TORCH_LIBRARY(torchext, m) { m.def("scale(Tensor x, float factor) -> Tensor"); }

TORCH_LIBRARY_IMPL(torchext, CPU, m) { m.impl("scale", &scale); }
