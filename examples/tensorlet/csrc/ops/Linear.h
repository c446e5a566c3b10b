#pragma once
// mm and bmm prepared once for every backend (what TensorIterator is to the
// elementwise ops): the shape and dtype checks, torch's refusal of bool, the common
// device and the contiguous result. A backend only runs its GEMM into that result.
#include "core/Tensor.h"

namespace tensorlet::native {

Tensor mm_result(const Tensor& self, const Tensor& mat2);   // [m, k] @ [k, n] -> [m, n]
Tensor bmm_result(const Tensor& self, const Tensor& mat2);  // [b, m, k] @ [b, k, n] -> [b, m, n]

}  // namespace tensorlet::native
