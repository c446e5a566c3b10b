#pragma once
// The loop bodies of the binary ops: one functor per op, compiled for the host by the
// CPU backend and for the device by the CUDA backend (TL_HOST_DEVICE), so the CPU
// op-info rows check the very arithmetic the CUDA kernels run. Each takes and returns
// the compute dtype T (bool for comparisons), converting as C++ does: bool arithmetic
// is or/and, uint8 wraps around. visit_binary maps an op to its functor.
#include <string>
#include <type_traits>

#include "core/Exception.h"
#include "ops/Elementwise.h"
#include "ops/HostDevice.h"

namespace tensorlet::ops {

template <typename T>
struct Add {
  T alpha;
  TL_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a + alpha * b); }
};

template <typename T>
struct Sub {
  T alpha;
  TL_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a - alpha * b); }
};

template <typename T>
struct Mul {
  TL_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a * b); }
};

template <typename T>  // floating T only: integer inputs divide in the default float dtype
struct Div {
  TL_HOST_DEVICE T operator()(T a, T b) const { return a / b; }
};

template <typename T>  // NaN wins, as in torch
struct Maximum {
  TL_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a > b ? a : b;
  }
};

template <typename T>
struct Eq {
  TL_HOST_DEVICE bool operator()(T a, T b) const { return a == b; }
};
template <typename T>
struct Lt {
  TL_HOST_DEVICE bool operator()(T a, T b) const { return a < b; }
};
template <typename T>
struct Gt {
  TL_HOST_DEVICE bool operator()(T a, T b) const { return a > b; }
};

// where(condition, a, b): the ternary loop body.
template <typename T>
struct Where {
  TL_HOST_DEVICE T operator()(bool condition, T a, T b) const { return condition ? a : b; }
};

// Calls `loop(functor)` with the functor of `op` for compute dtype T; div of an integer
// dtype (the shared layer divides in a float dtype) is an internal error.
template <typename T, typename Loop>
void visit_binary(BinaryOp op, T alpha, Loop&& loop) {
  switch (op) {
    case BinaryOp::Add: return loop(Add<T>{alpha});
    case BinaryOp::Sub: return loop(Sub<T>{alpha});
    case BinaryOp::Mul: return loop(Mul<T>{});
    case BinaryOp::Div:
      if constexpr (std::is_floating_point_v<T>) return loop(Div<T>{});
      break;
    case BinaryOp::Maximum: return loop(Maximum<T>{});
    case BinaryOp::Eq: return loop(Eq<T>{});
    case BinaryOp::Lt: return loop(Lt<T>{});
    case BinaryOp::Gt: return loop(Gt<T>{});
  }
  throw Error(std::string(binary_name(op)) + ": no loop for this dtype (the shared layer casts first)");
}

}  // namespace tensorlet::ops
