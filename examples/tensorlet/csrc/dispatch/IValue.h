#pragma once
// The boxed value type: kernels reached through the dispatcher take and return
// their arguments on a stack of IValues, so one calling convention serves every
// schema. Generated typed wrappers box and unbox.
#include <optional>
#include <vector>

#include "core/Tensor.h"

namespace tensorlet {

class IValue {
 public:
  enum class Tag : uint8_t { None, Tensor, Double, Int, Bool, IntList, ScalarType, Device };

  IValue() = default;
  IValue(std::nullopt_t) {}
  IValue(Tensor t) : tag_(t.defined() ? Tag::Tensor : Tag::None), tensor_(std::move(t)) {}
  IValue(double d) : tag_(Tag::Double) { u_.d = d; }
  IValue(int64_t i) : tag_(Tag::Int) { u_.i = i; }
  IValue(int i) : IValue(int64_t(i)) {}
  IValue(bool b) : tag_(Tag::Bool) { u_.b = b; }
  IValue(std::vector<int64_t> l) : tag_(Tag::IntList), list_(std::move(l)) {}
  IValue(ScalarType t) : tag_(Tag::ScalarType) { u_.st = t; }
  IValue(Device d) : tag_(Tag::Device) { u_.dev = d; }
  IValue(const Scalar& s) {
    if (s.is_floating_point()) *this = IValue(s.to_double());
    else if (s.is_bool()) *this = IValue(s.to<bool>());
    else *this = IValue(s.to_int());
  }
  template <typename T>
  IValue(const std::optional<T>& o) {
    if (o) *this = IValue(*o);
  }

  Tag tag() const { return tag_; }
  bool is_none() const { return tag_ == Tag::None; }
  bool is_tensor() const { return tag_ == Tag::Tensor; }
  bool is_device() const { return tag_ == Tag::Device; }
  bool is_double() const { return tag_ == Tag::Double; }
  bool is_int() const { return tag_ == Tag::Int; }
  bool is_bool() const { return tag_ == Tag::Bool; }

  const Tensor& to_tensor() const { check(Tag::Tensor); return tensor_; }
  Tensor& to_tensor_ref() { check(Tag::Tensor); return tensor_; }
  double to_double() const {
    if (tag_ == Tag::Int) return static_cast<double>(u_.i);
    check(Tag::Double);
    return u_.d;
  }
  int64_t to_int() const { check(Tag::Int); return u_.i; }
  bool to_bool() const { check(Tag::Bool); return u_.b; }
  const std::vector<int64_t>& to_int_list() const { check(Tag::IntList); return list_; }
  ScalarType to_scalar_type() const { check(Tag::ScalarType); return u_.st; }
  Device to_device() const { check(Tag::Device); return u_.dev; }
  Scalar to_scalar() const {
    if (tag_ == Tag::Double) return Scalar(u_.d);
    if (tag_ == Tag::Bool) return Scalar(u_.b);
    check(Tag::Int);
    return Scalar(u_.i);
  }
  std::optional<Tensor> to_optional_tensor() const { return is_none() ? std::nullopt : std::optional(to_tensor()); }
  std::optional<int64_t> to_optional_int() const { return is_none() ? std::nullopt : std::optional(to_int()); }
  std::optional<double> to_optional_double() const { return is_none() ? std::nullopt : std::optional(to_double()); }
  std::optional<std::vector<int64_t>> to_optional_int_list() const {
    return is_none() ? std::nullopt : std::optional(to_int_list());
  }
  std::optional<ScalarType> to_optional_scalar_type() const {
    return is_none() ? std::nullopt : std::optional(to_scalar_type());
  }
  std::optional<Device> to_optional_device() const { return is_none() ? std::nullopt : std::optional(to_device()); }
  std::optional<Scalar> to_optional_scalar() const { return is_none() ? std::nullopt : std::optional(to_scalar()); }

  static const char* tag_name(Tag t);

 private:
  void check(Tag expected) const {
    if (tag_ != expected)
      throw TypeError(std::string("IValue: expected ") + tag_name(expected) + " but got " + tag_name(tag_));
  }

  Tag tag_ = Tag::None;
  union {
    double d;
    int64_t i;
    bool b;
    ScalarType st;
    Device dev;
  } u_{};
  Tensor tensor_;
  std::vector<int64_t> list_;
};

using Stack = std::vector<IValue>;

// Moves the top `n` values off the stack (the kernel's arguments).
inline void drop(Stack* s, size_t n) { s->erase(s->end() - static_cast<std::ptrdiff_t>(n), s->end()); }

}  // namespace tensorlet
