#pragma once
// A number of unknown type, as passed for `Scalar` schema arguments.
#include <cstdint>
#include <type_traits>

#include "core/ScalarType.h"

namespace tensorlet {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Double };

  Scalar() : Scalar(int64_t(0)) {}
  Scalar(bool v) : kind_(Kind::Bool) { v_.i = v; }
  Scalar(double v) : kind_(Kind::Double) { v_.d = v; }
  Scalar(float v) : Scalar(double(v)) {}
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) { v_.i = static_cast<int64_t>(v); }

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Double; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  template <typename T>
  T to() const {
    return kind_ == Kind::Double ? static_cast<T>(v_.d) : static_cast<T>(v_.i);
  }
  double to_double() const { return to<double>(); }
  int64_t to_int() const { return to<int64_t>(); }

  // The dtype a 0-dim tensor holding this value gets (PyTorch's wrapped numbers).
  ScalarType type() const {
    return kind_ == Kind::Double ? ScalarType::Double : kind_ == Kind::Int ? ScalarType::Long : ScalarType::Bool;
  }
  Scalar operator-() const { return kind_ == Kind::Double ? Scalar(-v_.d) : Scalar(-v_.i); }
  bool equals(double d) const { return to_double() == d; }

 private:
  Kind kind_;
  union {
    double d;
    int64_t i;
  } v_;
};

}  // namespace tensorlet
