#pragma once
// CPU loop drivers over a LoopPlan. `cpu_parallel_for_each` hands the inner
// callback runs of the innermost dimension: (pointers, inner strides in
// elements, count). Work is split across OpenMP threads above kGrainSize.
#include <algorithm>
#include <cstdint>

#include "ops/TensorIterator.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tensorlet::cpu {

template <typename Inner>
void run_range(const LoopPlan& p, int64_t begin, int64_t end, Inner& inner) {
  const int nd = static_cast<int>(p.shape.size());
  const int64_t inner_size = p.shape[nd - 1];
  int64_t inner_strides[kMaxOperands];
  for (int k = 0; k < p.num_operands; ++k) inner_strides[k] = p.strides[k][nd - 1];
  int64_t idx = begin;
  while (idx < end) {
    int64_t outer = idx / inner_size, i0 = idx % inner_size;
    int64_t n = std::min(inner_size - i0, end - idx);
    char* ptrs[kMaxOperands];
    for (int k = 0; k < p.num_operands; ++k) ptrs[k] = p.data[k];
    // Decompose the outer index once per run; runs are long, so this is cheap.
    for (int d = nd - 2; d >= 0 && outer > 0; --d) {
      int64_t c = outer % p.shape[d];
      outer /= p.shape[d];
      for (int k = 0; k < p.num_operands; ++k) ptrs[k] += c * p.strides[k][d];
    }
    inner(ptrs, inner_strides, i0, n);
    idx += n;
  }
}

// `elem_sizes[k]` converts element strides into byte offsets.
template <typename Inner>
void cpu_parallel_for_each(const LoopPlan& plan, const int64_t* elem_sizes, Inner&& inner) {
  // Fold byte sizes into a plan copy so run_range can add raw offsets.
  LoopPlan p = plan;
  for (int k = 0; k < p.num_operands; ++k)
    for (auto& s : p.strides[k]) s *= elem_sizes[k];
  auto call = [&](char** ptrs, const int64_t* strides, int64_t i0, int64_t n) {
    char* shifted[kMaxOperands];
    for (int k = 0; k < p.num_operands; ++k) shifted[k] = ptrs[k] + i0 * strides[k];
    int64_t elem_strides[kMaxOperands];
    for (int k = 0; k < p.num_operands; ++k) elem_strides[k] = strides[k] / elem_sizes[k];
    inner(shifted, elem_strides, n);
  };
  const int64_t total = p.numel();
  if (total == 0) return;
#ifdef _OPENMP
  if (total > kGrainSize && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    const int64_t chunks = std::min<int64_t>(omp_get_max_threads(), (total + kGrainSize - 1) / kGrainSize);
#pragma omp parallel for num_threads(static_cast<int>(chunks))
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t begin = total * c / chunks, end = total * (c + 1) / chunks;
      run_range(p, begin, end, call);
    }
    return;
  }
#endif
  run_range(p, 0, total, call);
}

// Simple 1-D parallel loop over [0, n) in chunks of at least `grain`.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
#ifdef _OPENMP
  if (n > grain && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    const int64_t chunks = std::min<int64_t>(omp_get_max_threads(), (n + grain - 1) / grain);
#pragma omp parallel for num_threads(static_cast<int>(chunks))
    for (int64_t c = 0; c < chunks; ++c) f(n * c / chunks, n * (c + 1) / chunks);
    return;
  }
#endif
  if (n > 0) f(0, n);
}

template <typename T>
inline T* at(char* p, int64_t i, int64_t stride) {
  return reinterpret_cast<T*>(p) + i * stride;
}

// out[i] = op(a[i]) with fast paths for contiguous runs.
template <typename Out, typename In, typename Op>
void unary_loop(const LoopPlan& plan, Op op) {
  const int64_t sizes[] = {sizeof(Out), sizeof(In)};
  cpu_parallel_for_each(plan, sizes, [&](char** d, const int64_t* s, int64_t n) {
    Out* out = reinterpret_cast<Out*>(d[0]);
    const In* a = reinterpret_cast<const In*>(d[1]);
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = op(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i * s[0]] = op(a[i * s[1]]);
    }
  });
}

// out[i] = op(a[i], b[i]); contiguous and scalar-operand runs get their own loops
// so the compiler can vectorize them.
template <typename Out, typename In, typename Op>
void binary_loop(const LoopPlan& plan, Op op) {
  const int64_t sizes[] = {sizeof(Out), sizeof(In), sizeof(In)};
  cpu_parallel_for_each(plan, sizes, [&](char** d, const int64_t* s, int64_t n) {
    Out* out = reinterpret_cast<Out*>(d[0]);
    const In* a = reinterpret_cast<const In*>(d[1]);
    const In* b = reinterpret_cast<const In*>(d[2]);
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
    } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
      const In bv = *b;
      for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], bv);
    } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
      const In av = *a;
      for (int64_t i = 0; i < n; ++i) out[i] = op(av, b[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i * s[0]] = op(a[i * s[1]], b[i * s[2]]);
    }
  });
}

}  // namespace tensorlet::cpu
