#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/Reduce.h"
#include "ops/cpu/Loops.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::cpu {
namespace {

template <typename T>
T lowest() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}

template <typename T>
inline T combine(ReduceOp op, T acc, T v) {
  if (op == ReduceOp::Sum) return static_cast<T>(acc + v);
  if constexpr (std::is_floating_point_v<T>)
    if (v != v || acc != acc) return v != v ? v : acc;  // NaN wins, as in PyTorch
  return v > acc ? v : acc;
}

template <typename T>
T reduce_row(ReduceOp op, const T* x, int64_t n) {
  if (op == ReduceOp::Sum) {
    if constexpr (std::is_same_v<T, float>) return static_cast<T>(vec_kernels().sum_f32(x, n));
    if constexpr (std::is_same_v<T, double>) return static_cast<T>(vec_kernels().sum_f64(x, n));
  }
  T acc = op == ReduceOp::Sum ? T(0) : lowest<T>();
  for (int64_t i = 0; i < n; ++i) acc = combine(op, acc, x[i]);
  return acc;
}

// o[k] = op(o[k], rows[r * inner + k]) for the `count` rows of `inner` elements, k in [k0, k1).
template <typename T>
void fold_rows(ReduceOp op, T* o, const T* rows, int64_t count, int64_t inner, int64_t k0, int64_t k1) {
  for (int64_t r = 0; r < count; ++r) {
    const T* row = rows + r * inner;
    if (op == ReduceOp::Sum) {
#pragma omp simd
      for (int64_t k = k0; k < k1; ++k) o[k] = static_cast<T>(o[k] + row[k]);
    } else {
      for (int64_t k = k0; k < k1; ++k) o[k] = combine(op, o[k], row[k]);
    }
  }
}

// The reduction over the rows of one matrix whose rows are short (a column sum).
// Pieces over ranges of columns would each read a short run of every row, which the
// hardware prefetchers follow badly (4096x4096 floats took three times as long as
// the row sum). Instead each of kRowBlocks blocks of whole rows is folded, in
// parallel, into its own partial row, and the partial rows are combined in block
// order: the same result for any number of threads, and shorter sums.
constexpr int64_t kRowBlocks = 16;

template <typename T>
void reduce_rows_in_blocks(ReduceOp op, T init, T* out, const T* in, int64_t reduced, int64_t inner) {
  std::vector<T> partial(static_cast<size_t>(kRowBlocks * inner), init);
  parallel_for(kRowBlocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = reduced * b / kRowBlocks, r1 = reduced * (b + 1) / kRowBlocks;
      fold_rows(op, partial.data() + b * inner, in + r0 * inner, r1 - r0, inner, 0, inner);
    }
  });
  std::fill(out, out + inner, init);
  fold_rows(op, out, partial.data(), kRowBlocks, inner, 0, inner);
}

template <typename T>
void reduce(ReduceOp op, T* out, const T* in, int64_t outer, int64_t reduced, int64_t inner) {
  const T init = op == ReduceOp::Sum ? T(0) : lowest<T>();
  if (inner == 1) {
    // One long row: the row kernel itself runs in parallel.
    if (outer == 1) {
      out[0] = reduce_row(op, in, reduced);
      return;
    }
    parallel_for(outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(reduced, 1)), [&](int64_t a0, int64_t a1) {
      for (int64_t a = a0; a < a1; ++a) out[a] = reduce_row(op, in + a * reduced, reduced);
    });
    return;
  }
  if (outer == 1 && inner < kGrainSize && reduced >= kRowBlocks && reduced * inner > kGrainSize) {
    reduce_rows_in_blocks(op, init, out, in, reduced, inner);
    return;
  }
  // Reducing a middle dimension: accumulate whole rows of `inner` elements. A piece is a
  // range of outputs, each `reduced` elements of work: the grain counts elements read.
  const int64_t outputs_per_grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(reduced, 1));
  parallel_for(outer * inner, outputs_per_grain, [&](int64_t begin, int64_t end) {
    for (int64_t a = begin / inner; a * inner < end; ++a) {
      const int64_t k0 = std::max(begin, a * inner) - a * inner, k1 = std::min(end, (a + 1) * inner) - a * inner;
      T* o = out + a * inner;
      std::fill(o + k0, o + k1, init);
      fold_rows(op, o, in + a * reduced * inner, reduced, inner, k0, k1);
    }
  });
}

template <typename T>
bool greater_or_nan(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return v > best;
}

}  // namespace

void reduce_kernel(ReduceOp op, const Tensor& out, const Tensor& in, int64_t outer, int64_t reduced, int64_t inner) {
  if (out.numel() == 0) return;
  TL_DISPATCH_ALL_TYPES(in.dtype(), "reduce", {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      // bool only reaches here for amax; treat as uint8 and convert back.
      const bool* x = in.data<bool>();
      bool* o = out.data<bool>();
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t k = 0; k < inner; ++k) {
          bool acc = op == ReduceOp::Sum ? false : false;
          for (int64_t r = 0; r < reduced; ++r) acc = acc || x[(a * reduced + r) * inner + k];
          o[a * inner + k] = acc;
        }
    } else {
      reduce<scalar_t>(op, out.data<scalar_t>(), in.data<scalar_t>(), outer, reduced, inner);
    }
  });
}

void argmax_kernel(const Tensor& out, const Tensor& in, int64_t outer, int64_t reduced, int64_t inner) {
  TL_DISPATCH_ALL_TYPES(in.dtype(), "argmax", {
    const scalar_t* x = in.data<scalar_t>();
    int64_t* o = out.data<int64_t>();
    parallel_for(outer * inner, kGrainSize / std::max<int64_t>(reduced, 1) + 1, [&](int64_t begin, int64_t end) {
      for (int64_t idx = begin; idx < end; ++idx) {
        int64_t a = idx / inner, k = idx % inner;
        const scalar_t* p = x + a * reduced * inner + k;
        scalar_t best = p[0];
        int64_t best_i = 0;
        for (int64_t r = 1; r < reduced; ++r)
          if (greater_or_nan(p[r * inner], best)) {
            best = p[r * inner];
            best_i = r;
          }
        o[idx] = best_i;
      }
    });
  });
}

}  // namespace tensorlet::cpu
