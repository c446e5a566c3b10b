#pragma once
// A strided view over a Storage. Sizes, strides and the storage offset are
// counted in elements, never bytes.
#include <atomic>
#include <memory>
#include <vector>

#include "core/ScalarType.h"
#include "core/Storage.h"

namespace tensorlet {

// Shared by a tensor and all views of it: in-place writes bump it so autograd can
// detect that a tensor it saved has since been overwritten.
struct VersionCounter : IntrusiveTarget {
  std::atomic<uint32_t> version{0};
};

// Implemented by the autograd library; core only needs to ask "requires grad?".
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
  virtual bool requires_grad() const = 0;
};

class TensorImpl : public IntrusiveTarget {
 public:
  TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype, std::vector<int64_t> sizes,
             std::vector<int64_t> strides, int64_t storage_offset);

  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return is_contiguous_; }
  const intrusive_ptr<StorageImpl>& storage() const { return storage_; }
  void* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  // Only out= resizing swaps the storage of a live tensor.
  void set_storage(intrusive_ptr<StorageImpl> storage) { storage_ = std::move(storage); }
  // View metadata; only the view operators call this.
  void set_geometry(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t storage_offset);

  // Python numbers are turned into 0-dim "wrapped number" tensors, which take
  // part in type promotion with a lower priority.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }

  bool is_view() const { return is_view_; }
  void set_is_view(bool v) { is_view_ = v; }

  const intrusive_ptr<VersionCounter>& version_counter() const { return version_; }
  void share_version_counter(const TensorImpl& other) { version_ = other.version_; }
  uint32_t version() const { return version_->version.load(std::memory_order_relaxed); }
  void bump_version() { version_->version.fetch_add(1, std::memory_order_relaxed); }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) { autograd_meta_ = std::move(m); }
  bool requires_grad() const { return autograd_meta_ && autograd_meta_->requires_grad(); }

  // The Python object wrapping this impl, if any (borrowed; the bindings keep it
  // so that a tensor keeps its identity across calls).
  void* pyobj() const { return pyobj_; }
  void set_pyobj(void* obj) { pyobj_ = obj; }

 private:
  void refresh_numel_and_contiguity();

  intrusive_ptr<StorageImpl> storage_;
  ScalarType dtype_;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  int64_t storage_offset_;
  int64_t numel_ = 1;
  bool is_contiguous_ = true;
  bool wrapped_number_ = false;
  bool is_view_ = false;
  intrusive_ptr<VersionCounter> version_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  void* pyobj_ = nullptr;
};

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);

}  // namespace tensorlet
