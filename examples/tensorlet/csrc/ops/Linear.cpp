// mm / bmm: the shared preparation (ops/Linear.h), the CPU GEMM, and the matmul composite.
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Linear.h"
#include "ops/TensorIterator.h"
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
  static std::atomic<bool> enabled = [] {
    const char* v = std::getenv("TENSORLET_USE_BLAS");
    return !(v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "OFF") == 0 || std::strcmp(v, "off") == 0));
  }();
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
      cpu::parallel_for(m, 1 + kGrainSize / std::max<int64_t>(1, n * k), [&](int64_t i0, int64_t i1) {
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

void check_mm(const Tensor& a, const Tensor& b, const char* name) {
  TL_CHECK(a.dim() == 2, name, ": self must be a matrix");
  TL_CHECK(b.dim() == 2, name, ": mat2 must be a matrix");
  TL_CHECK(a.size(1) == b.size(0), name, ": mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1),
           " and ", b.size(0), "x", b.size(1), ")");
  TL_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ",
           scalar_type_name(a.dtype()), " != ", scalar_type_name(b.dtype()));
  TL_CHECK(a.dtype() != ScalarType::Bool, name, ": \"addmm\" not implemented for 'bool'");
}

}  // namespace

Tensor mm_result(const Tensor& self, const Tensor& mat2) {
  check_mm(self, mat2, "mm");
  return empty_tensor({self.size(0), mat2.size(1)}, self.dtype(), common_device({&self, &mat2}));
}

Tensor bmm_result(const Tensor& self, const Tensor& mat2) {
  TL_CHECK(self.dim() == 3 && mat2.dim() == 3, "batch1 and batch2 must be 3D tensors");
  TL_CHECK(self.size(0) == mat2.size(0), "batch1 and batch2 must have same number of batches, got ", self.size(0),
           " and ", mat2.size(0));
  check_mm(tensorlet::select(self, 0, 0 * self.size(0)), tensorlet::select(mat2, 0, 0), "bmm");
  return empty_tensor({self.size(0), self.size(1), mat2.size(2)}, self.dtype(), common_device({&self, &mat2}));
}

Tensor mm_impl(const Tensor& self, const Tensor& mat2) {
  Tensor out = mm_result(self, mat2);
  if (out.device().is_cpu()) gemm(self, mat2, out);
  return out;
}

// Every backend's mm.out: the backend's mm writes straight into `out` on the CPU when
// it can, otherwise into a new result that is copied (and cast) into `out`.
Tensor mm_out_impl(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  check_mm(self, mat2, "mm");
  std::vector<int64_t> shape = {self.size(0), mat2.size(1)};
  prepare_out(out, shape, self.dtype(), common_device({&self, &mat2}), "mm");
  if (out.device().is_meta()) return out;
  if (out.device().is_cpu() && out.is_contiguous() && out.dtype() == self.dtype() && !out.is_same(self) &&
      !out.is_same(mat2)) {
    gemm(self, mat2, out);
  } else {
    tensorlet::copy_(out, tensorlet::mm(self, mat2), false);
  }
  return out;
}

Tensor bmm_impl(const Tensor& self, const Tensor& mat2) {
  Tensor out = bmm_result(self, mat2);
  if (!out.device().is_cpu()) return out;
  for (int64_t i = 0; i < self.size(0); ++i)
    gemm(tensorlet::select(self, 0, i), tensorlet::select(mat2, 0, i), tensorlet::select(out, 0, i));
  return out;
}

Tensor matmul_composite(const Tensor& self, const Tensor& other) {
  const int64_t da = self.dim(), db = other.dim();
  TL_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db, "D");
  if (da == 1 && db == 1) return tensorlet::sum(tensorlet::mul(self, other));
  if (da == 2 && db == 2) return tensorlet::mm(self, other);
  if (da == 1 && db == 2) return tensorlet::squeeze(tensorlet::mm(tensorlet::unsqueeze(self, 0), other), 0);
  if (da == 2 && db == 1) return tensorlet::squeeze(tensorlet::mm(self, tensorlet::unsqueeze(other, 1)), 1);
  // Batched: broadcast the batch dims, fold them into one, bmm, unfold.
  Tensor a = da == 1 ? tensorlet::unsqueeze(self, 0) : self;
  Tensor b = db == 1 ? tensorlet::unsqueeze(other, 1) : other;
  std::vector<int64_t> batch_a(a.sizes().begin(), a.sizes().end() - 2);
  std::vector<int64_t> batch_b(b.sizes().begin(), b.sizes().end() - 2);
  std::vector<int64_t> batch = broadcast_shapes(batch_a, batch_b);
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  auto with = [&](std::initializer_list<int64_t> tail) {
    std::vector<int64_t> s = batch;
    s.insert(s.end(), tail);
    return s;
  };
  Tensor a3 = tensorlet::reshape(tensorlet::expand(a, with({m, k})), {nb, m, k});
  Tensor b3 = tensorlet::reshape(tensorlet::expand(b, with({b.size(-2), n})), {nb, b.size(-2), n});
  Tensor r = tensorlet::reshape(tensorlet::bmm(a3, b3), with({m, n}));
  if (da == 1) r = tensorlet::squeeze(r, -2);
  if (db == 1) r = tensorlet::squeeze(r, -1);
  return r;
}

}  // namespace tensorlet::native

// Turns the BLAS path of a USE_BLAS build on or off (no effect otherwise); returns
// whether BLAS was in use before. Exported for ctypes: tensorlet._native.core.
extern "C" __attribute__((visibility("default"))) int tensorlet_set_blas_enabled(int enabled) {
#ifdef TENSORLET_USE_BLAS
  return tensorlet::native::blas_enabled().exchange(enabled != 0) ? 1 : 0;
#else
  (void)enabled;
  (void)tensorlet::native::blas_enabled;
  return 0;
#endif
}
