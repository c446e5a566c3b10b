// sum / mean / amax / argmax. The input is brought into an [outer, reduced,
// inner] contiguous layout (a free view when the reduced dims are adjacent in a
// contiguous tensor, one copy otherwise) and handed to a single kernel: the CPU's
// in ops/cpu, CUDA's in ops/cuda (both start from the *_iteration functions).
#include "ops/Reduce.h"

#include <algorithm>
#include <limits>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/TensorIterator.h"

namespace tensorlet {

std::vector<int64_t> reduction_dims(const std::optional<std::vector<int64_t>>& dim, int64_t ndim) {
  std::vector<int64_t> dims;
  if (!dim || dim->empty()) {
    for (int64_t d = 0; d < ndim; ++d) dims.push_back(d);
    return dims;
  }
  for (int64_t d : *dim) dims.push_back(wrap_dim(d, ndim));
  std::sort(dims.begin(), dims.end());
  if (ndim == 0) dims.clear();
  return dims;
}

}  // namespace tensorlet

namespace tensorlet::native {

ReduceLayout reduce_layout(const Tensor& self, const std::vector<int64_t>& dims, bool keepdim) {
  ReduceLayout l;
  const int64_t n = self.dim();
  std::vector<bool> is_reduced(n, false);
  for (int64_t d : dims) is_reduced[d] = true;
  for (int64_t d = 0; d < n; ++d) {
    if (!is_reduced[d]) l.out_shape.push_back(self.sizes()[d]);
    else if (keepdim) l.out_shape.push_back(1);
  }
  bool adjacent = dims.empty() || dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  if (adjacent && self.is_contiguous()) {
    l.input = self;
    for (int64_t d = 0; d < n; ++d) {
      int64_t s = self.sizes()[d];
      if (is_reduced[d]) l.reduced *= s;
      else if (dims.empty() || d < dims.front()) l.outer *= s;
      else l.inner *= s;
    }
    return l;
  }
  std::vector<int64_t> order;
  for (int64_t d = 0; d < n; ++d)
    if (!is_reduced[d]) order.push_back(d);
  for (int64_t d : dims) order.push_back(d);
  l.input = tensorlet::contiguous(tensorlet::permute(self, order));
  for (int64_t d = 0; d < n; ++d) (is_reduced[d] ? l.reduced : l.outer) *= self.sizes()[d];
  return l;
}

namespace {

ScalarType sum_dtype(const Tensor& self, const std::optional<ScalarType>& dtype) {
  if (dtype) return *dtype;
  return is_floating_type(self.dtype()) ? self.dtype() : ScalarType::Long;  // integer sums widen, as in PyTorch
}

// The result in `out_dtype`; the loop's input cast to `input_dtype` (the Meta device: no input).
ReduceIteration iteration(const Tensor& self, const std::vector<int64_t>& dims, bool keepdim, ScalarType input_dtype,
                          ScalarType out_dtype) {
  ReduceIteration it;
  it.layout = reduce_layout(self, dims, keepdim);
  it.out = empty_tensor(it.layout.out_shape, out_dtype, self.device());
  if (self.device().is_meta()) it.layout.input = Tensor();
  else it.layout.input = cast_to(it.layout.input, input_dtype);
  return it;
}

}  // namespace

ReduceIteration sum_iteration(const Tensor& self, const std::optional<std::vector<int64_t>>& dim, bool keepdim,
                              const std::optional<ScalarType>& dtype) {
  const ScalarType dt = sum_dtype(self, dtype);
  return iteration(self, reduction_dims(dim, self.dim()), keepdim, dt, dt);
}

ReduceIteration mean_iteration(const Tensor& self, const std::optional<std::vector<int64_t>>& dim, bool keepdim,
                               const std::optional<ScalarType>& dtype) {
  ScalarType dt = dtype.value_or(self.dtype());
  TL_CHECK(is_floating_type(dt), "mean(): could not infer output dtype. Input dtype must be either a floating "
           "point or complex dtype. Got: ", scalar_type_name(dt));
  auto dims = reduction_dims(dim, self.dim());
  ReduceIteration it = iteration(self, dims, keepdim, dt, dt);
  int64_t count = 1;
  for (int64_t d : dims) count *= self.sizes()[d];
  it.mean_count = count;
  return it;
}

ReduceIteration amax_iteration(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim) {
  auto dims = reduction_dims(dim, self.dim());
  for (int64_t d : dims)
    TL_CHECK_INDEX(self.sizes()[d] != 0, "amax(): Expected reduction dim ", d, " to have non-zero size.");
  TL_CHECK_INDEX(self.numel() != 0 || !dims.empty() || self.dim() == 0,
                 "amax(): Expected reduction dim to be specified for input.numel() == 0.");
  return iteration(self, dims, keepdim, self.dtype(), self.dtype());
}

ReduceIteration argmax_iteration(const Tensor& self, const std::optional<int64_t>& dim, bool keepdim) {
  // torch refuses bool here (amax of bool is fine): which of several `true`s is "the max"
  // is an ordering question bool does not answer.
  TL_CHECK(self.dtype() != ScalarType::Bool, "argmax(): does not support bool input");
  Tensor input = self;
  std::vector<int64_t> dims;
  if (dim) {
    dims = {wrap_dim(*dim, self.dim())};
    if (self.dim() == 0) dims.clear();
  } else {
    input = tensorlet::reshape(self, {-1});
    dims = {0};
  }
  for (int64_t d : dims)
    TL_CHECK_INDEX(input.sizes()[d] != 0, "argmax(): Expected reduction dim ", d, " to have non-zero size.");
  ReduceIteration it = iteration(input, dims, dim && keepdim, input.dtype(), ScalarType::Long);
  return it;
}

Tensor finish_reduction(const ReduceIteration& it) {
  if (!it.mean_count || it.out.device().is_meta()) return it.out;
  return tensorlet::div_(it.out, wrapped_scalar_tensor(Scalar(static_cast<double>(*it.mean_count))));
}

Tensor sum_composite(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return tensorlet::sum(self, std::nullopt, false, dtype);
}

Tensor mean_composite(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return tensorlet::mean(self, std::nullopt, false, dtype);
}

}  // namespace tensorlet::native
