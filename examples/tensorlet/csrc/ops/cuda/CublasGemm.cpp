// mm and bmm in float32 / float64 through cuBLAS (USE_CUBLAS=ON; CMake compiles this file
// only then). cuBLAS is column-major and tensorlet row-major: C = A @ B is computed as
// C^T = B^T @ A^T, and a row-major matrix read column-major *is* its transpose, so no
// operand is copied; a transposed view (a column-major matrix) becomes op T instead. Only
// a layout that is neither (a sliced inner dim) is copied first.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <string>
#include <vector>

#include "generated/Functions.h"
#include "ops/cuda/CublasGemm.h"
#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {
namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string(what) + ": " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

// One handle per device and thread (a handle is not safe to share between threads that
// set its stream), created on first use and never destroyed: a handle destroyed by a
// static destructor at exit could run after the CUDA context is gone (torch leaks its
// pool for the same reason). Every call binds it to the stream tensorlet's kernels use.
cublasHandle_t handle() {
  thread_local std::vector<cublasHandle_t> handles;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  if (static_cast<size_t>(device) >= handles.size()) handles.resize(device + 1, nullptr);
  cublasHandle_t& h = handles[device];
  if (h == nullptr) {
    check_cublas(cublasCreate(&h), "cublasCreate");
    // Full float32 precision: no TF32 tensor-op math, whatever NVIDIA_TF32_OVERRIDE allows.
    check_cublas(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  check_cublas(cublasSetStream(h, current_stream()), "cublasSetStream");
  return h;
}

// A [rows, cols] operand as cuBLAS reads it: its pointer, leading dimension, whether
// cuBLAS must transpose it (column-major in memory) and the stride between batch entries.
struct Operand {
  Tensor keep;  // the tensor whose storage `data` points into (a copy when the layout needed one)
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
  int64_t batch_stride = 0;
};

Operand operand(const Tensor& t) {
  const int64_t rows = t.size(-2), cols = t.size(-1), rs = t.stride(-2), cs = t.stride(-1);
  Operand o;
  o.keep = t;
  if (cs == 1 && rs >= std::max<int64_t>(1, cols)) {
    o.ld = rs;  // row-major: read column-major, the transpose cuBLAS wants
  } else if (rs == 1 && cs >= std::max<int64_t>(1, rows)) {
    o.op = CUBLAS_OP_T, o.ld = cs;  // column-major (a transposed view)
  } else {
    o.keep = tensorlet::contiguous(t);
    o.ld = std::max<int64_t>(1, cols);
  }
  o.batch_stride = o.keep.dim() == 3 ? o.keep.stride(0) : 0;
  return o;
}

template <typename T>
struct Gemm;

template <>
struct Gemm<float> {
  static constexpr auto one = cublasSgemm;
  static constexpr auto batched = cublasSgemmStridedBatched;
};

template <>
struct Gemm<double> {
  static constexpr auto one = cublasDgemm;
  static constexpr auto batched = cublasDgemmStridedBatched;
};

int as_int(int64_t v, const char* what) {
  TL_CHECK(v <= INT_MAX, "mm: ", what, " = ", v, " is over cuBLAS's int limit");
  return static_cast<int>(v);
}

}  // namespace

template <typename T>
void cublas_gemm(const Tensor& self, const Tensor& mat2, const Tensor& out, int64_t batches) {
  const int64_t m = self.size(-2), k = self.size(-1), n = mat2.size(-1);
  if (out.numel() == 0) return;
  if (k == 0) {  // an empty sum: zeros (cuBLAS would leave C to beta alone)
    check(cudaMemsetAsync(out.data<T>(), 0, out.numel() * sizeof(T), current_stream()), "cudaMemsetAsync");
    return;
  }
  const Operand a = operand(self), b = operand(mat2);
  const T alpha = 1, beta = 0;
  // Column-major: out^T [n, m] = mat2^T [n, k] @ self^T [k, m].
  const int cn = as_int(n, "n"), cm = as_int(m, "m"), ck = as_int(k, "k");
  const int lda = as_int(a.ld, "lda"), ldb = as_int(b.ld, "ldb");
  if (batches == 1 && out.dim() == 2) {
    check_cublas(Gemm<T>::one(handle(), b.op, a.op, cn, cm, ck, &alpha, b.keep.template data<T>(), ldb,
                              a.keep.template data<T>(), lda, &beta, out.data<T>(), cn),
                 "cublas gemm");
  } else {
    check_cublas(Gemm<T>::batched(handle(), b.op, a.op, cn, cm, ck, &alpha, b.keep.template data<T>(), ldb,
                                  b.batch_stride, a.keep.template data<T>(), lda, a.batch_stride, &beta,
                                  out.data<T>(), cn, m * n, as_int(batches, "batch")),
                 "cublas gemm (strided batched)");
  }
}

template void cublas_gemm<float>(const Tensor&, const Tensor&, const Tensor&, int64_t);
template void cublas_gemm<double>(const Tensor&, const Tensor&, const Tensor&, int64_t);

}  // namespace tensorlet::cuda
