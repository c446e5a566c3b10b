#pragma once
#include <cstddef>

#include "core/Allocator.h"
#include "core/IntrusivePtr.h"

namespace tensorlet {

class StorageImpl : public IntrusiveTarget {
 public:
  StorageImpl(DataPtr data, size_t nbytes) : data_(std::move(data)), nbytes_(nbytes) {}
  static intrusive_ptr<StorageImpl> allocate(size_t nbytes, Device device) {
    return make_intrusive<StorageImpl>(get_allocator(device.type)->allocate(nbytes), nbytes);
  }
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }

 private:
  DataPtr data_;
  size_t nbytes_;
};

}  // namespace tensorlet
