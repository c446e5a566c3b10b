#pragma once
// TL_HOST_DEVICE marks a loop body (ops/BinaryOps.h, UnaryOps.h, ReduceOps.h) that both
// backends compile: for the host everywhere, for the device too when nvcc compiles it.
#ifdef __CUDACC__
#define TL_HOST_DEVICE __host__ __device__
#else
#define TL_HOST_DEVICE
#endif
