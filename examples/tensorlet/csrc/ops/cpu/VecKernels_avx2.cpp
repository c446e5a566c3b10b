// Built with the compile flags of the "avx2" variant (see CMakeLists.txt).
#define TL_VEC_BYTES 32
#define TL_VEC_NAME "avx2"
#include "ops/cpu/VecKernels.inc"

const tensorlet::cpu::VecKernels* tensorlet::cpu::vec_kernels_avx2() { return &kKernels; }
