#pragma once
// The loop bodies of the unary ops (TL_FORALL_UNARY_OPS): one functor per op, compiled
// for the host and for the device (TL_HOST_DEVICE), as ops/BinaryOps.h's are. Each
// takes and returns the compute dtype T, which unary_iteration makes floating for the
// ops that promote integers (exp, log, sqrt, sigmoid, tanh): those are defined for
// floating T only. visit_unary maps an op to its functor for the backends' loops.
#include <cmath>
#include <string>
#include <type_traits>

#include "core/Exception.h"
#include "ops/Elementwise.h"
#include "ops/HostDevice.h"

namespace tensorlet::ops {

template <typename T>
struct Neg {
  TL_HOST_DEVICE T operator()(T a) const { return static_cast<T>(-a); }
};

template <typename T>  // floats: the sign bit cleared, so abs(-0.0) is 0.0 (and NaN stays NaN), as in torch
struct Abs {
  TL_HOST_DEVICE T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) return a;
    else if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
    else return static_cast<T>(a < 0 ? -a : a);
  }
};

template <typename T>  // only negatives become 0: NaN and -0.0 pass through, as in torch (relu(-0.0) is -0.0)
struct Relu {
  TL_HOST_DEVICE T operator()(T a) const { return a < T(0) ? T(0) : a; }
};

template <typename T>  // -1, 0 or 1 (unsigned and bool: 0 or 1)
struct Sign {
  TL_HOST_DEVICE T operator()(T a) const {
    if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) return static_cast<T>(a != T(0));
    else return static_cast<T>((T(0) < a) - (a < T(0)));
  }
};

template <typename T>
struct Exp {
  TL_HOST_DEVICE T operator()(T a) const { return std::exp(a); }
};

template <typename T>
struct Log {
  TL_HOST_DEVICE T operator()(T a) const { return std::log(a); }
};

template <typename T>
struct Sqrt {
  TL_HOST_DEVICE T operator()(T a) const { return std::sqrt(a); }
};

template <typename T>
struct Sigmoid {
  TL_HOST_DEVICE T operator()(T a) const { return T(1) / (T(1) + std::exp(-a)); }
};

template <typename T>
struct Tanh {
  TL_HOST_DEVICE T operator()(T a) const { return std::tanh(a); }
};

// Calls `loop(functor)` with the functor of `op` for compute dtype T; a combination the
// shared layer never asks for (exp of an integer dtype) is an internal error.
template <typename T, typename Loop>
void visit_unary(UnaryOp op, Loop&& loop) {
  switch (op) {
#define TL_VISIT(name, Enum, promotes)                                   \
  case UnaryOp::Enum:                                                    \
    if constexpr (!promotes || std::is_floating_point_v<T>) return loop(Enum<T>{}); \
    break;
    TL_FORALL_UNARY_OPS(TL_VISIT)
#undef TL_VISIT
  }
  throw Error(std::string(unary_name(op)) + ": no loop for this dtype (the shared layer casts first)");
}

}  // namespace tensorlet::ops
