#pragma once
// The loop bodies of the binary ops: one functor per op, compiled for the host by the
// CPU backend and for the device by the CUDA backend (TL_HOST_DEVICE), so the CPU
// op-info rows check the very arithmetic the CUDA kernels run. Each takes and returns
// the compute dtype T (bool for comparisons), converting as C++ does: bool arithmetic
// is or/and, uint8 wraps around.
#include <type_traits>

#ifdef __CUDACC__
#define TL_HOST_DEVICE __host__ __device__
#else
#define TL_HOST_DEVICE
#endif

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

}  // namespace tensorlet::ops
