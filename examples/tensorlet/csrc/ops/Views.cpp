// View operators: new geometry over the same storage. Registered as
// CompositeExplicitAutograd, so they serve every backend (Meta included).
#include <algorithm>
#include <numeric>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/TensorIterator.h"

namespace tensorlet::native {
namespace {

std::vector<int64_t> infer_size(const std::vector<int64_t>& shape, int64_t numel) {
  std::vector<int64_t> out = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TL_CHECK(infer < 0, "only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      TL_CHECK(out[i] >= 0, "invalid shape dimension ", out[i]);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    TL_CHECK(known != 0 && numel % known == 0, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    TL_CHECK(known == numel, "shape '", shape_str(shape), "' is invalid for input of size ", numel);
  }
  return out;
}

// Strides for viewing `t` as `shape` without copying, if the memory allows it
// (PyTorch's computeStride): each run of merged input dims must be contiguous.
std::optional<std::vector<int64_t>> view_strides(const Tensor& t, const std::vector<int64_t>& shape) {
  const auto& old_sizes = t.sizes();
  const auto& old_strides = t.strides();
  std::vector<int64_t> strides(shape.size());
  if (t.numel() == 0 || old_sizes.empty()) return contiguous_strides(shape);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

}  // namespace

Tensor view_impl(const Tensor& self, const std::vector<int64_t>& size) {
  auto shape = infer_size(size, self.numel());
  auto strides = view_strides(self, shape);
  TL_CHECK(strides, "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                    "across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, shape, *strides, self.storage_offset());
}

Tensor reshape_composite(const Tensor& self, const std::vector<int64_t>& shape) {
  auto sizes = infer_size(shape, self.numel());
  if (view_strides(self, sizes)) return tensorlet::view(self, sizes);
  return tensorlet::view(tensorlet::clone(self), sizes);
}

Tensor permute_impl(const Tensor& self, const std::vector<int64_t>& dims) {
  int64_t n = self.dim();
  TL_CHECK(static_cast<int64_t>(dims.size()) == n, "permute(sparse_coo): number of dimensions in the tensor input "
           "does not match the length of the desired ordering of dimensions i.e. input.dim() = ", n,
           " is not equal to len(dims) = ", dims.size());
  std::vector<int64_t> sizes(n), strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n);
    TL_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor transpose_impl(const Tensor& self, int64_t dim0, int64_t dim1) {
  if (self.dim() == 0) return make_view(self, {}, {}, self.storage_offset());
  int64_t a = wrap_dim(dim0, self.dim()), b = wrap_dim(dim1, self.dim());
  auto sizes = self.sizes();
  auto strides = self.strides();
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor t_composite(const Tensor& self) {
  TL_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.dim() < 2 ? self : tensorlet::transpose(self, 0, 1);
}

Tensor expand_impl(const Tensor& self, const std::vector<int64_t>& size) {
  TL_CHECK(size.size() >= static_cast<size_t>(self.dim()), "expand: the number of sizes provided (", size.size(),
           ") must be greater or equal to the number of dimensions in the tensor (", self.dim(), ")");
  std::vector<int64_t> shape = size;
  size_t lead = size.size() - self.dim();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TL_CHECK(i >= lead, "expand: -1 is not allowed in a leading, non-existing dimension");
      shape[i] = self.sizes()[i - lead];
    }
  }
  return expand_view(self, shape);
}

Tensor squeeze_impl(const Tensor& self) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.sizes()[d] != 1) {
      sizes.push_back(self.sizes()[d]);
      strides.push_back(self.strides()[d]);
    }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze_dim_impl(const Tensor& self, int64_t dim) {
  if (self.dim() == 0) return make_view(self, {}, {}, self.storage_offset());
  int64_t d = wrap_dim(dim, self.dim());
  auto sizes = self.sizes();
  auto strides = self.strides();
  if (sizes[d] == 1) {
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze_impl(const Tensor& self, int64_t dim) {
  int64_t d = wrap_dim(dim, self.dim() + 1);
  auto sizes = self.sizes();
  auto strides = self.strides();
  int64_t stride = d < self.dim() ? sizes[d] * strides[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor select_impl(const Tensor& self, int64_t dim, int64_t index) {
  TL_CHECK_INDEX(self.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  TL_CHECK_INDEX(index >= -size && index < size, "index ", index, " is out of bounds for dimension ", d, " with size ",
                 size);
  if (index < 0) index += size;
  auto sizes = self.sizes();
  auto strides = self.strides();
  int64_t offset = self.storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(self, sizes, strides, offset);
}

Tensor slice_impl(const Tensor& self, int64_t dim, const std::optional<int64_t>& start, const std::optional<int64_t>& end,
                  int64_t step) {
  TL_CHECK_INDEX(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  TL_CHECK_VALUE(step > 0, "slice step must be positive");
  int64_t d = wrap_dim(dim, self.dim());
  int64_t size = self.sizes()[d];
  auto clamp = [size](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size); };
  int64_t s = start ? clamp(*start) : 0;
  int64_t e = end ? clamp(*end) : size;
  int64_t len = e > s ? (e - s + step - 1) / step : 0;
  auto sizes = self.sizes();
  auto strides = self.strides();
  int64_t offset = self.storage_offset() + s * strides[d];
  sizes[d] = len;
  strides[d] *= step;
  return make_view(self, sizes, strides, offset);
}

}  // namespace tensorlet::native
