#include "core/ScalarType.h"

namespace tensorlet {

size_t element_size(ScalarType t) {
  switch (t) {
#define TL_CASE(ctype, name, pyname) \
  case ScalarType::name:             \
    return sizeof(ctype);
    TENSORLET_FORALL_SCALAR_TYPES(TL_CASE)
#undef TL_CASE
    default:
      throw TypeError("element_size: undefined dtype");
  }
}

const char* scalar_type_name(ScalarType t) {
  switch (t) {
#define TL_CASE(ctype, name, pyname) \
  case ScalarType::name:             \
    return #pyname;
    TENSORLET_FORALL_SCALAR_TYPES(TL_CASE)
#undef TL_CASE
    default:
      return "undefined";
  }
}

ScalarType scalar_type_from_name(const std::string& n) {
#define TL_CASE(ctype, name, pyname) \
  if (n == #pyname) return ScalarType::name;
  TENSORLET_FORALL_SCALAR_TYPES(TL_CASE)
#undef TL_CASE
  throw TypeError("unknown dtype '" + n + "'");
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  // Rows/columns follow the X-macro order: b1 u1 i4 i8 f4 f8 (same entries as
  // PyTorch's table for these types; uint8 with int32 widens to int32 because
  // int32 already holds every uint8 value).
  constexpr auto b1 = ScalarType::Bool, u1 = ScalarType::Byte, i4 = ScalarType::Int,
                 i8 = ScalarType::Long, f4 = ScalarType::Float, f8 = ScalarType::Double;
  static constexpr ScalarType table[kNumScalarTypes][kNumScalarTypes] = {
      /*        b1  u1  i4  i8  f4  f8 */
      /* b1 */ {b1, u1, i4, i8, f4, f8},
      /* u1 */ {u1, u1, i4, i8, f4, f8},
      /* i4 */ {i4, i4, i4, i8, f4, f8},
      /* i8 */ {i8, i8, i8, i8, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8},
  };
  TL_CHECK_TYPE(a != ScalarType::Undefined && b != ScalarType::Undefined, "promote_types: undefined dtype");
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace tensorlet
