#include "segment_cpu.h"

#include <ATen/Parallel.h>

namespace segments {

at::Tensor segment_sum_csr_cpu(const at::Tensor& src, const at::Tensor& indptr) {
  TORCH_CHECK(indptr.dim() == 1 && indptr.scalar_type() == at::kLong, "indptr: a 1-d int64 tensor");
  TORCH_CHECK(src.dim() >= 1, "src: at least 1-d");
  const int64_t segments = indptr.size(0) - 1;
  auto sizes = src.sizes().vec();
  sizes[0] = segments;
  at::Tensor out = at::zeros(sizes, src.options());
  const int64_t* offsets = indptr.data_ptr<int64_t>();
  at::parallel_for(0, segments, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (offsets[i + 1] > offsets[i]) out[i] = src.slice(0, offsets[i], offsets[i + 1]).sum(0);
    }
  });
  return out;
}

}  // namespace segments
