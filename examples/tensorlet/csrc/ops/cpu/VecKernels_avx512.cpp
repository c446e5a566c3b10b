// Built with the compile flags of the "avx512" variant (see CMakeLists.txt).
#define TL_VEC_BYTES 64
#define TL_VEC_NAME "avx512"
#include "ops/cpu/VecKernels.inc"

const tensorlet::cpu::VecKernels* tensorlet::cpu::vec_kernels_avx512() { return &kKernels; }
