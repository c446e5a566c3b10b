#include "core/TensorImpl.h"

#include <sstream>

#include "core/Tensor.h"

namespace tensorlet {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

TensorImpl::TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype, std::vector<int64_t> sizes,
                       std::vector<int64_t> strides, int64_t storage_offset)
    : storage_(std::move(storage)), dtype_(dtype), version_(make_intrusive<VersionCounter>()) {
  set_geometry(std::move(sizes), std::move(strides), storage_offset);
}

void TensorImpl::set_geometry(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  storage_offset_ = offset;
  refresh_numel_and_contiguity();
}

void TensorImpl::refresh_numel_and_contiguity() {
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  // Size-1 dims may carry any stride, as in PyTorch.
  is_contiguous_ = true;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) {
      is_contiguous_ = numel_ == 0;
      break;
    }
    expected *= sizes_[i];
  }
}

// ---- Tensor --------------------------------------------------------------

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);  // 0-dim tensors accept dim 0 and -1
  TL_CHECK_INDEX(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                 "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

std::string shape_str(const std::vector<int64_t>& sizes) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  s << "]";
  return s.str();
}

int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim())]; }

std::string Tensor::describe() const {
  if (!defined()) return "undefined";
  return std::string(scalar_type_name(dtype())) + shape_str(sizes());
}

Scalar Tensor::item() const {
  TL_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  TL_CHECK(device().is_cpu(), "item(): tensor must be on the CPU, got ", device().str());
  return TL_DISPATCH_ALL_TYPES(dtype(), "item", {
    scalar_t v = *data<scalar_t>();
    if constexpr (std::is_same_v<scalar_t, bool>) return Scalar(v);
    else if constexpr (std::is_floating_point_v<scalar_t>) return Scalar(static_cast<double>(v));
    else return Scalar(static_cast<int64_t>(v));
  });
}

Tensor make_tensor(intrusive_ptr<StorageImpl> storage, ScalarType dtype, std::vector<int64_t> sizes) {
  auto strides = contiguous_strides(sizes);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, std::move(sizes), std::move(strides), 0));
}

Tensor make_view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  auto impl = make_intrusive<TensorImpl>(base.impl()->storage(), base.dtype(), std::move(sizes), std::move(strides),
                                         offset);
  impl->share_version_counter(*base.impl());
  impl->set_is_view(true);
  return Tensor(std::move(impl));
}

Tensor empty_tensor(const std::vector<int64_t>& sizes, ScalarType dtype, Device device) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    TL_CHECK_VALUE(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape_str(sizes));
    n *= s;
  }
  return make_tensor(StorageImpl::allocate(static_cast<size_t>(n) * element_size(dtype), device), dtype, sizes);
}

Tensor scalar_tensor(const Scalar& s, ScalarType dtype, Device device) {
  Tensor t = empty_tensor({}, dtype, Device(DeviceType::CPU));
  TL_DISPATCH_ALL_TYPES(dtype, "scalar_tensor", { *t.data<scalar_t>() = s.to<scalar_t>(); });
  TL_CHECK(device.is_cpu(), "scalar_tensor: only CPU tensors can be built from a number here");
  return t;
}

Tensor wrapped_scalar_tensor(const Scalar& s) {
  Tensor t = scalar_tensor(s, s.type());
  t.impl()->set_wrapped_number(true);
  return t;
}

}  // namespace tensorlet
