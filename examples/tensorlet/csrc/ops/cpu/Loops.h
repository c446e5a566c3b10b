#pragma once
// CPU loop drivers over a LoopPlan. `cpu_parallel_for_each` hands the inner
// callback runs of the innermost dimension: (pointers, inner strides in
// elements, count). Above kGrainSize, work is split into pieces that the
// caller and tensorlet's worker threads (Parallel.cpp; OMP_NUM_THREADS threads
// in all) share.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ops/TensorIterator.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace tensorlet::cpu {

// Elements per thread below which a loop stays serial.
constexpr int64_t kGrainSize = 32768;

// Threads a parallel loop may use, the caller included (OMP_NUM_THREADS).
int max_threads();
// Inside a piece of a parallel loop (or an OpenMP region): loops run serially there.
bool in_parallel_region();
// Runs body(ctx, piece) for every piece in [0, pieces), on the calling thread and
// the pool's workers; returns when all are done, rethrowing the first exception.
void parallel_pieces(int64_t pieces, void (*body)(void*, int64_t), void* ctx);
// Pieces per thread: more pieces than threads lets a thread that starts late, is
// preempted, or runs slower (a virtual machine's core that the host shares with
// other guests, say) leave its share to the others. With 4, the 16M-float sum on a 2-core VM
// took 1.04-1.17 times torch's time; with 16, 0.88-0.94 (1 piece each: 1.29).
constexpr int64_t kPiecesPerThread = 16;

// Splits [0, n) into at most `max_pieces` ranges, at least `grain` long, and
// runs f(begin, end) on each, in parallel when there is more than one.
template <typename F>
void parallel_ranges(int64_t n, int64_t grain, F& f) {
  const int threads = (n > grain) ? max_threads() : 1;
  if (threads > 1 && !in_parallel_region()) {
    const int64_t pieces = std::min<int64_t>(int64_t{threads} * kPiecesPerThread, (n + grain - 1) / grain);
    if (pieces > 1) {
      auto body = [&](int64_t c) { f(n * c / pieces, n * (c + 1) / pieces); };
      using Body = decltype(body);
      parallel_pieces(pieces, [](void* ctx, int64_t c) { (*static_cast<Body*>(ctx))(c); }, &body);
      return;
    }
  }
  f(int64_t{0}, n);
}

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
  auto range = [&](int64_t begin, int64_t end) { run_range(p, begin, end, call); };
  parallel_ranges(total, kGrainSize, range);
}

// Simple 1-D parallel loop over [0, n) in pieces of at least `grain`.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n > 0) parallel_ranges(n, std::max<int64_t>(grain, 1), f);
}

template <typename T>
inline T* at(char* p, int64_t i, int64_t stride) {
  return reinterpret_cast<T*>(p) + i * stride;
}

// out[i] = op(a[i]) with fast paths for contiguous runs: `contiguous(a, out, n)`, where
// given, computes the same op over a run (a SIMD kernel), else a loop of `op`.
template <typename Out, typename In, typename Op, typename Contiguous = std::nullptr_t>
void unary_loop(const LoopPlan& plan, Op op, Contiguous contiguous = nullptr) {
  const int64_t sizes[] = {sizeof(Out), sizeof(In)};
  cpu_parallel_for_each(plan, sizes, [&](char** d, const int64_t* s, int64_t n) {
    Out* out = reinterpret_cast<Out*>(d[0]);
    const In* a = reinterpret_cast<const In*>(d[1]);
    if (s[0] == 1 && s[1] == 1) {
      if constexpr (std::is_same_v<Contiguous, std::nullptr_t>) {
        for (int64_t i = 0; i < n; ++i) out[i] = op(a[i]);
      } else {
        contiguous(a, out, n);
      }
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
