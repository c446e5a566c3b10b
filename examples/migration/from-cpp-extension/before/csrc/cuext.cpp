// BEFORE (never built): the binding, written against torch/extension.h (pybind11 + ATen).
#include <torch/extension.h>

void scale_add_cuda(const torch::Tensor& x, const torch::Tensor& y, double alpha, torch::Tensor& out);

torch::Tensor scale_add(const torch::Tensor& x, const torch::Tensor& y, double alpha) {
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), "scale_add: CUDA tensors expected");
  TORCH_CHECK(x.sizes() == y.sizes(), "scale_add: shapes differ");
  auto out = torch::empty_like(x);
  scale_add_cuda(x.contiguous(), y.contiguous(), alpha, out);
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("scale_add", &scale_add, "x + alpha * y"); }
