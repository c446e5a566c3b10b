#pragma once
// Hot kernels compiled three times (VecKernels_{default,avx2,avx512}.cpp, each
// with its own -m flags) and picked once at run time from the CPU's features.
// Set TENSORLET_CPU_CAPABILITY=default|avx2|avx512 to force a variant.
#include <cstdint>

#include "ops/Elementwise.h"

namespace tensorlet::cpu {

#define TL_COUNT_UNARY(name, Enum, promotes) +1
constexpr int kUnaryOpCount = 0 TL_FORALL_UNARY_OPS(TL_COUNT_UNARY);
#undef TL_COUNT_UNARY

struct VecKernels {
  const char* name;
  void (*add_f32)(const float* a, const float* b, float* out, int64_t n);
  void (*mul_f32)(const float* a, const float* b, float* out, int64_t n);
  double (*sum_f32)(const float* x, int64_t n);
  double (*sum_f64)(const double* x, int64_t n);
  // C[m,n] (+)= A[m,k] @ B[k,n] with arbitrary element strides for A and B.
  void (*gemm_f32)(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs, const float* b,
                   int64_t b_rs, int64_t b_cs, float* c, int64_t ldc);
  void (*gemm_f64)(int64_t m, int64_t n, int64_t k, const double* a, int64_t a_rs, int64_t a_cs, const double* b,
                   int64_t b_rs, int64_t b_cs, double* c, int64_t ldc);
  // Softmax (or log_softmax) of each of `rows` contiguous rows of `cols` elements.
  void (*softmax_f32)(const float* in, float* out, int64_t rows, int64_t cols, bool log);
  void (*softmax_f64)(const double* in, double* out, int64_t rows, int64_t cols, bool log);
  // out[i] = op(a[i]) over one contiguous run, indexed by UnaryOp; `stream` writes past
  // the caches (the result exceeds them). Same values as ops/UnaryOps.h's bodies, within
  // 3 ulp for exp, log, sigmoid and tanh (VecKernelsUnary.inc).
  void (*unary_f32[kUnaryOpCount])(const float* a, float* out, int64_t n, bool stream);
  void (*unary_f64[kUnaryOpCount])(const double* a, double* out, int64_t n, bool stream);
};

const VecKernels& vec_kernels();
// The bytes of operands beyond which an elementwise op's data comes from memory and its
// result could not stay cached for the next op, so that it is written past the caches:
// the largest data cache's share for the CPUs that share it (CpuCapability.cpp), or
// TENSORLET_STREAMING_THRESHOLD. Raises ValueError where that variable is not a size.
int64_t streaming_threshold_bytes();

const VecKernels* vec_kernels_default();
const VecKernels* vec_kernels_avx2();
const VecKernels* vec_kernels_avx512();

}  // namespace tensorlet::cpu
