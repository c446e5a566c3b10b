#pragma once
// The user-facing handle: a reference-counted pointer to a TensorImpl. Operators
// are free functions (see generated/Functions.h), not methods.
#include <string>
#include <vector>

#include "core/Scalar.h"
#include "core/TensorImpl.h"

namespace tensorlet {

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  const std::vector<int64_t>& sizes() const { return impl_->sizes(); }
  const std::vector<int64_t>& strides() const { return impl_->strides(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  ScalarType dtype() const { return impl_->dtype(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool requires_grad() const { return impl_->requires_grad(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data() const {
    return static_cast<T*>(impl_->data());
  }
  // Reads a one-element CPU tensor.
  Scalar item() const;
  std::string describe() const;  // "float32[2, 3]" for messages

  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  intrusive_ptr<TensorImpl> impl_;
};

// Wraps a fresh impl. `sizes` get contiguous strides.
Tensor make_tensor(intrusive_ptr<StorageImpl> storage, ScalarType dtype, std::vector<int64_t> sizes);
// A tensor sharing `base`'s storage and version counter with new geometry.
Tensor make_view(const Tensor& base, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset);
// Allocates uninitialized memory on `device`.
Tensor empty_tensor(const std::vector<int64_t>& sizes, ScalarType dtype, Device device);
// A 0-dim tensor standing for a Python number in type promotion.
Tensor wrapped_scalar_tensor(const Scalar& s);
Tensor scalar_tensor(const Scalar& s, ScalarType dtype, Device device = Device());

int64_t wrap_dim(int64_t dim, int64_t ndim);  // negative dims count from the end
std::string shape_str(const std::vector<int64_t>& sizes);

}  // namespace tensorlet
