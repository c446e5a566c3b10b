#pragma once
// Helpers for backward formulas that are more than one op (used by derivatives.yaml).
#include <optional>
#include <vector>

#include "core/Tensor.h"
#include "ops/TensorOperators.h"

namespace tensorlet {

// Sums `grad` down to `sizes` (undoes broadcasting).
Tensor sum_to(const Tensor& grad, const std::vector<int64_t>& sizes);
Tensor sum_backward(const Tensor& grad, const std::vector<int64_t>& sizes,
                    const std::optional<std::vector<int64_t>>& dim, bool keepdim);
Tensor mean_backward(const Tensor& grad, const std::vector<int64_t>& sizes,
                     const std::optional<std::vector<int64_t>>& dim, bool keepdim);
Tensor amax_backward(const Tensor& grad, const Tensor& self, const Tensor& result, const std::vector<int64_t>& dim,
                     bool keepdim);
Tensor maximum_backward(const Tensor& grad, const Tensor& self, const Tensor& other);
Tensor relu_backward(const Tensor& grad, const Tensor& result);
// d softmax: result * (grad - sum(grad * result)); d log_softmax: grad - exp(result) * sum(grad),
// the sums along `dim`; cast back to the input's dtype when softmax(dtype=) changed it.
Tensor softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim, ScalarType self_dtype);
Tensor log_softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim, ScalarType self_dtype);
Tensor permute_backward(const Tensor& grad, const std::vector<int64_t>& dims);
Tensor select_backward(const Tensor& grad, const std::vector<int64_t>& sizes, int64_t dim, int64_t index);
Tensor slice_backward(const Tensor& grad, const std::vector<int64_t>& sizes, int64_t dim,
                      std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);

}  // namespace tensorlet
