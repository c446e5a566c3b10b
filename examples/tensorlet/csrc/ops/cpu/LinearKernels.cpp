// The CPU (and Meta) kernels of mm and bmm: a BLAS (USE_BLAS builds) or the built-in
// GEMMs of the vector kernels. The shape and dtype checks, the common device and the
// result come from the shared layer (ops/Linear.h), as for ops/cuda/LinearKernels.cu.
#include <atomic>

#include "core/Environment.h"
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Linear.h"
#include "ops/cpu/Loops.h"
#include "ops/cpu/VecKernels.h"

#ifdef TENSORLET_USE_BLAS
#ifdef HAVE_BLAS_ILP64
#error "tensorlet passes BLAS 32-bit integers: an ILP64 BLAS (e.g. scipy-openblas64) does not fit"
#endif
// A BLAS built with renamed symbols says so in its pkg-config Cflags, as NumPy and
// SciPy read them: scipy-openblas32 has -DBLAS_SYMBOL_PREFIX=scipy_ (scipy_sgemm_).
#ifndef BLAS_SYMBOL_PREFIX
#define BLAS_SYMBOL_PREFIX
#endif
#define TL_BLAS_CONCAT_(prefix, name) prefix##name
#define TL_BLAS_CONCAT(prefix, name) TL_BLAS_CONCAT_(prefix, name)
#define TL_BLAS(name) TL_BLAS_CONCAT(BLAS_SYMBOL_PREFIX, name)
extern "C" {
void TL_BLAS(sgemm_)(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
                     const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
                     const int* ldc);
void TL_BLAS(dgemm_)(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
                     const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
                     const int* ldc);
}
#endif

namespace tensorlet::native {
namespace {

// USE_BLAS builds send float matmuls to sgemm/dgemm unless this is off: the
// environment (TENSORLET_USE_BLAS=0) or tensorlet_set_blas_enabled(0) (benchmarks
// compare the built-in GEMM with the BLAS one in one process).
std::atomic<bool>& blas_enabled() {
  static std::atomic<bool> enabled = environment_switch("TENSORLET_USE_BLAS", true);
  return enabled;
}

#ifdef TENSORLET_USE_BLAS
// Row-major C = A @ B is column-major C^T = B^T @ A^T. Each operand must have a
// unit stride in one of its two dims for BLAS; otherwise fall back.
template <typename T, typename Fn>
bool blas_gemm(Fn fn, const Tensor& a, const Tensor& b, const Tensor& c) {
  auto layout = [](const Tensor& t, char* trans, int* ld) {
    if (t.stride(1) == 1 && t.stride(0) >= std::max<int64_t>(1, t.size(1))) { *trans = 'N'; *ld = static_cast<int>(t.stride(0)); return true; }
    if (t.stride(0) == 1 && t.stride(1) >= std::max<int64_t>(1, t.size(0))) { *trans = 'T'; *ld = static_cast<int>(t.stride(1)); return true; }
    return false;
  };
  char ta, tb;
  int lda, ldb;
  if (!layout(a, &ta, &lda) || !layout(b, &tb, &ldb)) return false;
  int m = static_cast<int>(a.size(0)), n = static_cast<int>(b.size(1)), k = static_cast<int>(a.size(1));
  int ldc = std::max(1, n);
  T one = 1, zero = 0;
  fn(&tb, &ta, &n, &m, &k, &one, b.data<T>(), &ldb, a.data<T>(), &lda, &zero, c.data<T>(), &ldc);
  return true;
}
#endif

// c = a @ b for 2-D CPU tensors; `c` is contiguous.
void gemm(const Tensor& a, const Tensor& b, const Tensor& c) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (c.numel() == 0) return;
  const auto& vk = cpu::vec_kernels();
  switch (a.dtype()) {
    case ScalarType::Float:
#ifdef TENSORLET_USE_BLAS
      if (k > 0 && blas_enabled().load(std::memory_order_relaxed) && blas_gemm<float>(&TL_BLAS(sgemm_), a, b, c)) return;
#endif
      return vk.gemm_f32(m, n, k, a.data<float>(), a.stride(0), a.stride(1), b.data<float>(), b.stride(0),
                         b.stride(1), c.data<float>(), n);
    case ScalarType::Double:
#ifdef TENSORLET_USE_BLAS
      if (k > 0 && blas_enabled().load(std::memory_order_relaxed) && blas_gemm<double>(&TL_BLAS(dgemm_), a, b, c)) return;
#endif
      return vk.gemm_f64(m, n, k, a.data<double>(), a.stride(0), a.stride(1), b.data<double>(), b.stride(0),
                         b.stride(1), c.data<double>(), n);
    default:
      break;
  }
  TL_DISPATCH_ALL_TYPES(a.dtype(), "mm", {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      throw TypeError("mm: \"addmm_impl_cpu_\" not implemented for 'bool'");
    } else {
      // Integer matmul: i-k-j order keeps the inner loop contiguous in b and c.
      const scalar_t* pa = a.data<scalar_t>();
      const scalar_t* pb = b.data<scalar_t>();
      scalar_t* pc = c.data<scalar_t>();
      cpu::parallel_for(m, 1 + cpu::kGrainSize / std::max<int64_t>(1, n * k), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          scalar_t* row = pc + i * n;
          for (int64_t j = 0; j < n; ++j) row[j] = 0;
          for (int64_t p = 0; p < k; ++p) {
            scalar_t av = pa[i * a.stride(0) + p * a.stride(1)];
            for (int64_t j = 0; j < n; ++j) row[j] = static_cast<scalar_t>(row[j] + av * pb[p * b.stride(0) + j * b.stride(1)]);
          }
        }
      });
    }
  });
}

}  // namespace

Tensor mm_impl(const Tensor& self, const Tensor& mat2) {
  Tensor out = mm_result(self, mat2);
  if (out.device().is_cpu()) gemm(self, mat2, out);
  return out;
}

// mm.out: the GEMM writes straight into `out` when it can (contiguous, mm's dtype, no
// alias of an input); otherwise mm's result is copied (and cast) into it.
Tensor mm_out_impl(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  prepare_mm_out(self, mat2, out);
  const bool gemm_writes_out = out.device().is_cpu() && out.is_contiguous() && out.dtype() == self.dtype() &&
                               !out.is_same(self) && !out.is_same(mat2);
  if (!gemm_writes_out) return mm_out_generic(self, mat2, out);  // its checks again: cheap, `out` has its shape now
  gemm(self, mat2, out);
  return out;
}

Tensor bmm_impl(const Tensor& self, const Tensor& mat2) {
  Tensor out = bmm_result(self, mat2);
  if (!out.device().is_cpu()) return out;
  for (int64_t i = 0; i < self.size(0); ++i)
    gemm(tensorlet::select(self, 0, i), tensorlet::select(mat2, 0, i), tensorlet::select(out, 0, i));
  return out;
}

}  // namespace tensorlet::native

// Turns the BLAS path of a USE_BLAS build on or off (no effect otherwise); returns
// whether BLAS was in use before, or -1 (and changes nothing) where TENSORLET_USE_BLAS is
// not a switch (the matmuls raise the ValueError). Exported for ctypes.
extern "C" __attribute__((visibility("default"))) int tensorlet_set_blas_enabled(int enabled) {
#ifdef TENSORLET_USE_BLAS
  try {
    return tensorlet::native::blas_enabled().exchange(enabled != 0) ? 1 : 0;
  } catch (const tensorlet::ValueError&) {
    return -1;
  }
#else
  (void)enabled;
  (void)tensorlet::native::blas_enabled;
  return 0;
#endif
}
