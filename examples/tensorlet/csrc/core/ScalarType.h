#pragma once
// The element types. Every per-type table in the project is generated from the
// single X-macro list below, so adding a type means touching one line.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/Exception.h"

namespace tensorlet {

// _(C++ type, enumerator, Python name)
#define TENSORLET_FORALL_SCALAR_TYPES(_) \
  _(bool, Bool, bool)                    \
  _(uint8_t, Byte, uint8)                \
  _(int32_t, Int, int32)                 \
  _(int64_t, Long, int64)                \
  _(float, Float, float32)               \
  _(double, Double, float64)

enum class ScalarType : int8_t {
#define TL_ENUM(ctype, name, pyname) name,
  TENSORLET_FORALL_SCALAR_TYPES(TL_ENUM)
#undef TL_ENUM
  Undefined,
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);

size_t element_size(ScalarType t);
const char* scalar_type_name(ScalarType t);  // "float32"
ScalarType scalar_type_from_name(const std::string& name);

inline bool is_floating_type(ScalarType t) { return t == ScalarType::Float || t == ScalarType::Double; }
inline bool is_integral_type(ScalarType t, bool include_bool) {
  return t == ScalarType::Byte || t == ScalarType::Int || t == ScalarType::Long ||
         (include_bool && t == ScalarType::Bool);
}

// PyTorch's promotion lattice restricted to our six types.
ScalarType promote_types(ScalarType a, ScalarType b);

constexpr ScalarType kDefaultFloat = ScalarType::Float;

template <typename T>
struct CppTypeToScalarType;
#define TL_SPECIALIZE(ctype, name, pyname)                        \
  template <>                                                     \
  struct CppTypeToScalarType<ctype> {                             \
    static constexpr ScalarType value = ScalarType::name;         \
  };
TENSORLET_FORALL_SCALAR_TYPES(TL_SPECIALIZE)
#undef TL_SPECIALIZE

}  // namespace tensorlet

// Run `__VA_ARGS__` (a lambda body) with `scalar_t` bound to the C++ type of `TYPE`.
#define TL_DISPATCH_CASE(ctype, name, pyname) \
  case ::tensorlet::ScalarType::name:         \
    return __tl_body.template operator()<ctype>();
#define TL_DISPATCH_ALL_TYPES(TYPE, OPNAME, ...)                                      \
  [&] {                                                                               \
    auto __tl_body = [&]<typename scalar_t>() { __VA_ARGS__ };                        \
    switch (TYPE) {                                                                   \
      TENSORLET_FORALL_SCALAR_TYPES(TL_DISPATCH_CASE)                                 \
      default:                                                                        \
        throw ::tensorlet::TypeError(std::string(OPNAME) + ": unsupported dtype");    \
    }                                                                                 \
  }()
#define TL_DISPATCH_FLOAT_TYPES(TYPE, OPNAME, ...)                                    \
  [&] {                                                                               \
    auto __tl_body = [&]<typename scalar_t>() { __VA_ARGS__ };                        \
    switch (TYPE) {                                                                   \
      case ::tensorlet::ScalarType::Float: return __tl_body.template operator()<float>();   \
      case ::tensorlet::ScalarType::Double: return __tl_body.template operator()<double>(); \
      default:                                                                        \
        throw ::tensorlet::TypeError(std::string(OPNAME) + ": expected a floating point dtype, got " + \
                                     ::tensorlet::scalar_type_name(TYPE));            \
    }                                                                                 \
  }()
