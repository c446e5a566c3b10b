#pragma once
// Memory for storages comes from one allocator per device type. Backends that
// live in other shared libraries (CUDA) register theirs when they are loaded.
#include <cstddef>
#include <utility>

#include "core/Device.h"

namespace tensorlet {

// Owning pointer with a type-erased deleter; `context` is what the deleter frees
// (it differs from `data` for memory borrowed from NumPy, for example).
class DataPtr {
 public:
  using Deleter = void (*)(void* context);
  DataPtr() = default;
  DataPtr(void* data, void* context, Deleter deleter, Device device)
      : data_(data), context_(context), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(context_, o.context_);
    std::swap(deleter_, o.deleter_);
    std::swap(device_, o.device_);
    return *this;
  }
  ~DataPtr() {
    if (deleter_) deleter_(context_);
  }
  void* get() const { return data_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  void* context_ = nullptr;
  Deleter deleter_ = nullptr;
  Device device_;
};

struct Allocator {
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
  // Copies between two buffers this allocator owns (used for clone-like ops).
  virtual void copy_data(void* dst, const void* src, size_t nbytes) const = 0;
};

void set_allocator(DeviceType type, Allocator* allocator);
// Throws a clear error when the backend for `type` is not loaded.
Allocator* get_allocator(DeviceType type);
bool has_allocator(DeviceType type);

}  // namespace tensorlet
