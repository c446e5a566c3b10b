#include <ATen/ATen.h>
#include <torch/library.h>

namespace dropin_ops {

at::Tensor muladd_cpu(const at::Tensor& a, const at::Tensor& b, double c) {
  TORCH_CHECK(a.sizes() == b.sizes(), "a and b differ in shape");
  TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat, "float tensors only");
  at::Tensor ac = a.contiguous(), bc = b.contiguous();
  at::Tensor out = at::empty_like(ac);
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) po[i] = pa[i] * pb[i] + static_cast<float>(c);
  return out;
}

// Each row of x times its factor.
at::Tensor scale_rows_cpu(const at::Tensor& x, const at::Tensor& factors) {
  TORCH_CHECK(x.dim() == 2 && factors.dim() == 1 && factors.size(0) == x.size(0), "x [n, m], factors [n]");
  return x * factors.unsqueeze(1);
}

TORCH_LIBRARY(dropin_ops, m) {
  m.def("muladd(Tensor a, Tensor b, float c) -> Tensor");
  m.def("scale_rows(Tensor x, Tensor factors) -> Tensor");
}

TORCH_LIBRARY_IMPL(dropin_ops, CPU, m) {
  m.impl("muladd", &muladd_cpu);
  m.impl("scale_rows", &scale_rows_cpu);
}

}  // namespace dropin_ops
