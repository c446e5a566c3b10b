#include "autograd/FunctionsManual.h"

#include <algorithm>

#include "ops/Reduce.h"

namespace tensorlet {

Tensor sum_to(const Tensor& grad, const std::vector<int64_t>& sizes) {
  if (grad.sizes() == sizes) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d)
    if (d < lead || (sizes[d - lead] == 1 && grad.size(d) != 1)) dims.push_back(d);
  Tensor r = dims.empty() ? grad : tensorlet::sum(grad, dims, /*keepdim=*/true, std::nullopt);
  return tensorlet::reshape(r, sizes);
}

Tensor sum_backward(const Tensor& grad, const std::vector<int64_t>& sizes,
                    const std::optional<std::vector<int64_t>>& dim, bool keepdim) {
  Tensor g = grad;
  if (!keepdim && !sizes.empty()) {
    for (int64_t d : reduction_dims(dim, static_cast<int64_t>(sizes.size()))) g = tensorlet::unsqueeze(g, d);
  }
  return tensorlet::expand(g, sizes);
}

Tensor mean_backward(const Tensor& grad, const std::vector<int64_t>& sizes,
                     const std::optional<std::vector<int64_t>>& dim, bool keepdim) {
  int64_t n = 1;
  for (int64_t d : reduction_dims(dim, static_cast<int64_t>(sizes.size()))) n *= sizes[d];
  return sum_backward(grad, sizes, dim, keepdim) / Scalar(static_cast<double>(n));
}

namespace {
Tensor as_input_dtype(const Tensor& g, ScalarType self_dtype) {
  return g.dtype() == self_dtype ? g : tensorlet::_to_copy(g, self_dtype, std::nullopt);
}
}  // namespace

Tensor softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim, ScalarType self_dtype) {
  Tensor dot = tensorlet::sum(grad * result, std::vector<int64_t>{dim}, /*keepdim=*/true, std::nullopt);
  return as_input_dtype(result * (grad - dot), self_dtype);
}

Tensor log_softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim, ScalarType self_dtype) {
  Tensor total = tensorlet::sum(grad, std::vector<int64_t>{dim}, /*keepdim=*/true, std::nullopt);
  return as_input_dtype(grad - tensorlet::exp(result) * total, self_dtype);
}

Tensor amax_backward(const Tensor& grad, const Tensor& self, const Tensor& result, const std::vector<int64_t>& dim,
                     bool keepdim) {
  // The gradient is shared evenly between all elements equal to the maximum.
  Tensor g = sum_backward(grad, self.sizes(), dim, keepdim);
  Tensor r = sum_backward(result, self.sizes(), dim, keepdim);
  Tensor mask = tensorlet::_to_copy(tensorlet::eq(self, r), grad.dtype(), std::nullopt);
  Tensor count = sum_backward(tensorlet::sum(mask, dim, /*keepdim=*/true, std::nullopt), self.sizes(), dim, true);
  return g * mask / count;
}

Tensor maximum_backward(const Tensor& grad, const Tensor& self, const Tensor& other) {
  // Ties split the gradient in half, as in PyTorch.
  Tensor zero = tensorlet::zeros_like(grad, std::nullopt);
  Tensor tie = tensorlet::where(tensorlet::eq(self, other), grad / Scalar(2.0), zero);
  return tensorlet::where(tensorlet::gt(self, other), grad, tie);
}

Tensor relu_backward(const Tensor& grad, const Tensor& result) {
  return tensorlet::where(tensorlet::gt(result, wrapped_scalar_tensor(Scalar(0))), grad,
                          tensorlet::zeros_like(grad, std::nullopt));
}

Tensor permute_backward(const Tensor& grad, const std::vector<int64_t>& dims) {
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], static_cast<int64_t>(dims.size()))] = static_cast<int64_t>(i);
  return tensorlet::permute(grad, inverse);
}

Tensor select_backward(const Tensor& grad, const std::vector<int64_t>& sizes, int64_t dim, int64_t index) {
  Tensor out = tensorlet::zeros(sizes, grad.dtype(), grad.device());
  tensorlet::copy_(tensorlet::select(out, dim, index), grad, false);
  return out;
}

Tensor slice_backward(const Tensor& grad, const std::vector<int64_t>& sizes, int64_t dim,
                      std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  Tensor out = tensorlet::zeros(sizes, grad.dtype(), grad.device());
  tensorlet::copy_(tensorlet::slice(out, dim, start, end, step), grad, false);
  return out;
}

}  // namespace tensorlet
