// The CUDA GEMM of mm and bmm (and through them matmul): the shape and dtype checks,
// the common device and the result come from the shared layer (ops/Linear.h). With
// USE_CUBLAS=ON float32 and float64 go to cuBLAS (CublasGemm.cu); every other dtype,
// and every dtype without it, runs the tiled kernel below.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Linear.h"
#include "ops/cuda/CublasGemm.h"
#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {
namespace {

constexpr int kTile = 16;
constexpr int64_t kMaxGridZ = 65535;

// c = a @ b for each of gridDim.z contiguous [m, k] @ [k, n] pairs (blockIdx.z: which),
// through 16x16 shared-memory tiles, one output per thread.
template <typename T>
__global__ void gemm_kernel(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  __shared__ T ta[kTile][kTile];
  __shared__ T tb[kTile][kTile];
  a += blockIdx.z * m * k;
  b += blockIdx.z * k * n;
  c += blockIdx.z * m * n;
  const int64_t row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  T acc = 0;
  for (int64_t p0 = 0; p0 < k; p0 += kTile) {
    ta[threadIdx.y][threadIdx.x] = (row < m && p0 + threadIdx.x < k) ? a[row * k + p0 + threadIdx.x] : T(0);
    tb[threadIdx.y][threadIdx.x] = (col < n && p0 + threadIdx.y < k) ? b[(p0 + threadIdx.y) * n + col] : T(0);
    __syncthreads();
    for (int q = 0; q < kTile; ++q) acc += ta[threadIdx.y][q] * tb[q][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

// out[i] = self[i] @ mat2[i] for the `batches` matrices of contiguous copies of both.
void batched_gemm(const Tensor& self, const Tensor& mat2, const Tensor& out, int64_t batches) {
  if (out.numel() == 0) return;
  bool done = false;
  TL_DISPATCH_ALL_TYPES(out.dtype(), "mm", {
    if constexpr (kHaveCublas && (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>)) {
      cublas_gemm<scalar_t>(self, mat2, out, batches);
      done = true;
    }
  });
  if (done) return;
  const Tensor a = tensorlet::contiguous(self), b = tensorlet::contiguous(mat2);
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  TL_DISPATCH_ALL_TYPES(out.dtype(), "mm", {
    for (int64_t first = 0; first < batches; first += kMaxGridZ) {
      const dim3 threads(kTile, kTile);
      const dim3 grid(blocks_for(n, kTile), blocks_for(m, kTile), static_cast<unsigned>(std::min(kMaxGridZ, batches - first)));
      gemm_kernel<scalar_t><<<grid, threads>>>(a.data<scalar_t>() + first * m * k, b.data<scalar_t>() + first * k * n,
                                               out.data<scalar_t>() + first * m * n, m, n, k);
    }
  });
  check(cudaGetLastError(), "mm kernel");
}

}  // namespace
}  // namespace tensorlet::cuda

namespace tensorlet::native {

Tensor mm_cuda(const Tensor& self, const Tensor& mat2) {
  Tensor out = mm_result(self, mat2);
  cuda::batched_gemm(self, mat2, out, 1);
  return out;
}

Tensor bmm_cuda(const Tensor& self, const Tensor& mat2) {
  Tensor out = bmm_result(self, mat2);
  cuda::batched_gemm(self, mat2, out, out.size(0));
  return out;
}

}  // namespace tensorlet::native
