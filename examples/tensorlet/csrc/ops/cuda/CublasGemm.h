#pragma once
// float32 / float64 GEMMs through cuBLAS (USE_CUBLAS=ON, TENSORLET_USE_CUBLAS): the
// tiled kernel of LinearKernels.cu stays for the other dtypes and for builds without it.
#include "core/Tensor.h"

namespace tensorlet::cuda {

#ifdef TENSORLET_USE_CUBLAS
inline constexpr bool kHaveCublas = true;
#else
inline constexpr bool kHaveCublas = false;
#endif

// out[i] = self[i] @ mat2[i] for `batches` matrices (1: mm on 2-d tensors), T float or
// double; `out` is the shared layer's contiguous result. Defined only with cuBLAS.
template <typename T>
void cublas_gemm(const Tensor& self, const Tensor& mat2, const Tensor& out, int64_t batches);

}  // namespace tensorlet::cuda
