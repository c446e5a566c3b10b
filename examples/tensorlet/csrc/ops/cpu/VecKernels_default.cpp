// Built with the compile flags of the "default" variant (see CMakeLists.txt).
#define TL_VEC_BYTES 16
#define TL_VEC_NAME "default"
#include "ops/cpu/VecKernels.inc"

const tensorlet::cpu::VecKernels* tensorlet::cpu::vec_kernels_default() { return &kKernels; }
