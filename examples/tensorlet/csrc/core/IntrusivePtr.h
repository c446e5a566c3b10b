#pragma once
// Reference counting kept inside the object, so a raw pointer can be turned back
// into an owning pointer (the Python bindings and the dispatcher do this).
#include <atomic>
#include <cstdint>
#include <utility>

namespace tensorlet {

class IntrusiveTarget {
 public:
  IntrusiveTarget() = default;
  IntrusiveTarget(const IntrusiveTarget&) = delete;
  IntrusiveTarget& operator=(const IntrusiveTarget&) = delete;
  virtual ~IntrusiveTarget() = default;

  void incref() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void decref() const {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint32_t> refcount_{0};
};

template <typename T>
class intrusive_ptr {
 public:
  intrusive_ptr() = default;
  intrusive_ptr(std::nullptr_t) {}
  // Takes a new reference to `p`.
  explicit intrusive_ptr(T* p) : p_(p) {
    if (p_) p_->incref();
  }
  intrusive_ptr(const intrusive_ptr& o) : intrusive_ptr(o.p_) {}
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  template <typename U>
  intrusive_ptr(const intrusive_ptr<U>& o) : intrusive_ptr(static_cast<T*>(o.get())) {}
  ~intrusive_ptr() {
    if (p_) p_->decref();
  }
  intrusive_ptr& operator=(intrusive_ptr o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const intrusive_ptr& o) const { return p_ == o.p_; }
  // Gives up ownership without decrementing (paired with reclaim()).
  T* release() { return std::exchange(p_, nullptr); }
  static intrusive_ptr reclaim(T* p) {
    intrusive_ptr r;
    r.p_ = p;
    return r;
  }

 private:
  T* p_ = nullptr;
};

template <typename T, typename... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace tensorlet
