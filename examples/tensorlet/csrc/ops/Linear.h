#pragma once
// mm and bmm prepared once for every backend (what TensorIterator is to the
// elementwise ops): the shape and dtype checks, torch's refusal of bool, the common
// device and the contiguous result. A backend only runs its GEMM into that result.
#include "core/Tensor.h"

namespace tensorlet::native {

Tensor mm_result(const Tensor& self, const Tensor& mat2);   // [m, k] @ [k, n] -> [m, n]
Tensor bmm_result(const Tensor& self, const Tensor& mat2);  // [b, m, k] @ [b, k, n] -> [b, m, n]

// mm.out's checks: mm's, then the out= tensor's (prepare_out: device, shape, dtype; an
// empty one resized).
void prepare_mm_out(const Tensor& self, const Tensor& mat2, const Tensor& out);
// mm.out for any backend: the backend's mm, copied (and cast) into `out`. CUDA's
// mm.out; the CPU's where its GEMM can't write into `out` itself.
Tensor mm_out_generic(const Tensor& self, const Tensor& mat2, const Tensor& out);

}  // namespace tensorlet::native
