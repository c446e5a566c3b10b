#include "common.h"
#include "cpu/segment_cpu.h"
#ifdef WITH_CUDA
#include "cuda/segment_cuda.h"
#endif

TORCH_LIBRARY_FRAGMENT(torch_segments, m) { m.def("segment_sum_csr(Tensor src, Tensor indptr) -> Tensor"); }

TORCH_LIBRARY_IMPL(torch_segments, CPU, m) { m.impl("segment_sum_csr", &segments::segment_sum_csr_cpu); }

#ifdef WITH_CUDA
TORCH_LIBRARY_IMPL(torch_segments, CUDA, m) { m.impl("segment_sum_csr", &segments::segment_sum_csr_cuda); }
#endif
