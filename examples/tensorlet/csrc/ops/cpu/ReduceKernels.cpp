// The CPU (and Meta) kernels of sum, mean, amax and argmax: loops over the shared
// layer's [outer, reduced, inner] layout (ops/Reduce.h's *_iteration). Their bodies are ops/ReduceOps.h's reducers, the ones the CUDA kernels
// run; only a contiguous float or double sum leaves them, for the SIMD kernels
// (VecKernels), whose blocked sums are faster and more accurate than one running sum.
#include <algorithm>
#include <memory>
#include <type_traits>

#include "generated/NativeFunctions.h"
#include "ops/Reduce.h"
#include "ops/ReduceOps.h"
#include "ops/cpu/Loops.h"
#include "ops/cpu/VecKernels.h"

namespace tensorlet::cpu {
namespace {

// The reducer's result for one contiguous row of n elements.
template <typename R, typename T>
auto reduce_row(const R& r, const T* x, int64_t n) {
  if constexpr (std::is_same_v<R, ops::SumReducer<float>>) {
    return static_cast<float>(vec_kernels().sum_f32(x, n));
  } else if constexpr (std::is_same_v<R, ops::SumReducer<double>>) {
    return vec_kernels().sum_f64(x, n);
  } else {
    typename R::Acc acc = r.identity();
    for (int64_t i = 0; i < n; ++i) acc = r.step(acc, x[i], i);
    return r.result(acc);
  }
}

// o[k] = merge(o[k], rows[r * inner + k]) for the `count` rows of `inner` elements, k in
// [k0, k1). Only for reducers whose accumulator is the element (sum, amax): an element
// is then the accumulator of itself, and rows of elements and partial rows fold alike.
// Four rows per pass: o[k] is loaded and stored once for four rows read, not once per
// row (the column sum of 4096x4096 floats was 1.07-1.13x torch's on an AVX-512 Xeon with
// one row per pass, the partial rows' loads and stores beside the rows' reads).
template <typename R, typename T>
void fold_rows(const R& r, T* o, const T* rows, int64_t count, int64_t inner, int64_t k0, int64_t k1) {
  static_assert(std::is_same_v<typename R::Acc, T>);
  int64_t row_index = 0;
  for (; row_index + 4 <= count; row_index += 4) {
    const T* a = rows + row_index * inner;
    const T* b = a + inner;
    const T* c = b + inner;
    const T* d = c + inner;
#pragma omp simd
    for (int64_t k = k0; k < k1; ++k) o[k] = r.merge(o[k], r.merge(r.merge(a[k], b[k]), r.merge(c[k], d[k])));
  }
  for (; row_index < count; ++row_index) {
    const T* row = rows + row_index * inner;
#pragma omp simd
    for (int64_t k = k0; k < k1; ++k) o[k] = r.merge(o[k], row[k]);
  }
}

// The reduction over the rows of one matrix whose rows are short (a column sum).
// Pieces over ranges of columns would each read a short run of every row, which the
// hardware prefetchers follow badly (4096x4096 floats took three times as long as
// the row sum). Instead each of kRowBlocks blocks of whole rows is folded, in
// parallel, into its own partial row, and the partial rows are combined in block
// order: the same result for any number of threads, and shorter sums.
constexpr int64_t kRowBlocks = 16;

template <typename R, typename T>
void reduce_rows_in_blocks(const R& r, T* out, const T* in, int64_t reduced, int64_t inner) {
  // Not a std::vector: vector<bool> (amax of bool) has no data().
  const auto partial = std::make_unique<T[]>(static_cast<size_t>(kRowBlocks * inner));
  std::fill(partial.get(), partial.get() + kRowBlocks * inner, r.identity());
  parallel_for(kRowBlocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = reduced * b / kRowBlocks, r1 = reduced * (b + 1) / kRowBlocks;
      fold_rows(r, partial.get() + b * inner, in + r0 * inner, r1 - r0, inner, 0, inner);
    }
  });
  std::fill(out, out + inner, r.identity());
  fold_rows(r, out, partial.get(), kRowBlocks, inner, 0, inner);
}

// Reducing a middle dimension (inner > 1): each output folds its strided column of
// `reduced` elements. A piece is a range of outputs: the grain counts elements read.
template <typename R, typename T, typename Out>
void reduce_middle(const R& r, Out* out, const T* in, int64_t outer, int64_t reduced, int64_t inner) {
  const int64_t outputs_per_grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(reduced, 1));
  if constexpr (std::is_same_v<typename R::Acc, Out>) {
    // Whole rows of `inner` elements at a time: contiguous reads.
    parallel_for(outer * inner, outputs_per_grain, [&](int64_t begin, int64_t end) {
      for (int64_t a = begin / inner; a * inner < end; ++a) {
        const int64_t k0 = std::max(begin, a * inner) - a * inner, k1 = std::min(end, (a + 1) * inner) - a * inner;
        Out* o = out + a * inner;
        std::fill(o + k0, o + k1, r.identity());
        fold_rows(r, o, in + a * reduced * inner, reduced, inner, k0, k1);
      }
    });
  } else {
    // An accumulator that is not the result (argmax's value and index): one column at a time.
    parallel_for(outer * inner, outputs_per_grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* column = in + (o / inner) * reduced * inner + o % inner;
        typename R::Acc acc = r.identity();
        for (int64_t k = 0; k < reduced; ++k) acc = r.step(acc, column[k * inner], k);
        out[o] = r.result(acc);
      }
    });
  }
}

template <typename R, typename T, typename Out>
void run_reduction(const R& r, Out* out, const T* in, int64_t outer, int64_t reduced, int64_t inner) {
  if (inner == 1) {
    // One long row: the row kernel itself runs in parallel.
    if (outer == 1) {
      out[0] = reduce_row(r, in, reduced);
      return;
    }
    parallel_for(outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(reduced, 1)), [&](int64_t a0, int64_t a1) {
      for (int64_t a = a0; a < a1; ++a) out[a] = reduce_row(r, in + a * reduced, reduced);
    });
    return;
  }
  if constexpr (std::is_same_v<typename R::Acc, Out>) {
    if (outer == 1 && inner < kGrainSize && reduced >= kRowBlocks && reduced * inner > kGrainSize) {
      reduce_rows_in_blocks(r, out, in, reduced, inner);
      return;
    }
  }
  reduce_middle(r, out, in, outer, reduced, inner);
}

// The loop of `it` with Reducer<T> for T, its input's dtype (the shared layer has cast
// it to the dtype the loop accumulates in); nothing for the Meta device (no input).
template <template <typename> class Reducer>
void reduce(const native::ReduceIteration& it, const char* name) {
  const native::ReduceLayout& l = it.layout;
  if (!l.input.defined() || it.out.numel() == 0) return;
  TL_DISPATCH_ALL_TYPES(l.input.dtype(), name, {
    const auto r = ops::make_reducer<Reducer, scalar_t>();
    using Result = decltype(r.result(r.identity()));
    run_reduction(r, it.out.data<Result>(), l.input.data<scalar_t>(), l.outer, l.reduced, l.inner);
  });
}

}  // namespace
}  // namespace tensorlet::cpu

namespace tensorlet::native {
using cpu::reduce;  // the loop TL_REDUCE_KERNELS runs

TL_REDUCE_KERNELS(impl)

}  // namespace tensorlet::native
