#pragma once
#include <ATen/ATen.h>

namespace segments {
at::Tensor segment_sum_csr_cuda(const at::Tensor& src, const at::Tensor& indptr);
}
