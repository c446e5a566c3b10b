// The CUDA loops of sum, mean, amax and argmax: one reduction kernel family over the
// shared layer's [outer, reduced, inner] layout, given one of ops/ReduceOps.h's
// reducers. The result dtype, the accumulation dtype (int64 for integer sums, dtype=),
// the refusals and mean's division come from the shared layer (ops/Reduce.h).
#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

#include "core/Allocator.h"
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Reduce.h"
#include "ops/ReduceOps.h"
#include "ops/cuda/Loops.cuh"

namespace tensorlet::cuda {
namespace {

// __shfl_down_sync for any trivially copyable accumulator (a value and its index, for
// argmax), word by word.
template <typename A>
__device__ A shuffle_down(A v, int offset) {
  constexpr int kWords = (sizeof(A) + sizeof(int) - 1) / sizeof(int);
  int words[kWords] = {};
  memcpy(words, &v, sizeof(A));
#pragma unroll
  for (int k = 0; k < kWords; ++k) words[k] = __shfl_down_sync(0xffffffffu, words[k], offset);
  memcpy(&v, words, sizeof(A));
  return v;
}

// The block's merged accumulator, in thread 0: warp shuffles, then the warps' results.
// Every thread of the block must call it (it synchronizes the block).
template <typename R>
__device__ typename R::Acc block_merge(const R& r, typename R::Acc acc) {
  __shared__ typename R::Acc warp_results[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset >>= 1) acc = r.merge(acc, shuffle_down(acc, offset));
  if (lane == 0) warp_results[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < kThreads / 32 ? warp_results[lane] : r.identity();
    for (int offset = 16; offset > 0; offset >>= 1) acc = r.merge(acc, shuffle_down(acc, offset));
  }
  __syncthreads();  // the next call may overwrite warp_results
  return acc;
}

// A block's partial accumulator, padded to whole 4-byte words so that the last block can
// read another block's write word by word from L2 (ld.global.cg: never a line its SM's
// L1, which is not coherent across SMs, might hold).
template <typename A>
struct alignas(alignof(A) > 4 ? alignof(A) : 4) PartialSlot {
  A value;
};

template <typename A>
__device__ A load_from_l2(const PartialSlot<A>* slot) {
  constexpr int kWords = sizeof(PartialSlot<A>) / sizeof(int);
  int words[kWords];
#pragma unroll
  for (int k = 0; k < kWords; ++k) words[k] = __ldcg(reinterpret_cast<const int*>(slot) + k);
  A v;
  memcpy(&v, words, sizeof(A));
  return v;
}

// Everything into one result in one kernel: each block merges its share into a partial
// accumulator over 16-byte packs, and the last block to finish (a device-wide count)
// merges the partials and writes the result, where a second kernel did (a stand-alone
// copy of this loop on an H200: 16M floats 20.9 us against 21.8-22.1 with two kernels,
// 64M 64.7 against 69.8-70.1; tensorlet's own sum did not gain as much). Each thread
// keeps kLoads independent loads in flight (each with its own accumulator): with one
// load per iteration the sum measured 0.45 of the copy bandwidth on an H200, waiting on
// memory latency rather than bandwidth; 8 measured lower than 4 for amax (more
// registers, fewer threads resident) and the same for sum.
constexpr int kLoads = 4;

// Blocks per SM the register count must allow: 8 (every warp slot of an H200's SM filled)
// for the plain reducers of 4-byte types, which ptxas fits without spilling (nvcc 13.0,
// sm_90: sum and amax of float and int32); the others (argmax's value-and-index, 8-byte
// and 1-byte loads) would spill, and keep the compiler's own choice. Measured on an H200,
// float32, fraction of the copy bandwidth: sum 0.72 -> 0.79 at 16M, 0.90 -> 0.95 at 64M,
// amax 0.75 -> 0.82 and 0.92 -> 0.98.
template <typename R, typename T>
constexpr int reduce_all_min_blocks() {
  return sizeof(T) == 4 && std::is_arithmetic_v<typename R::Acc> ? 8 : 1;
}

template <int V, typename R, typename T, typename Out>
__global__ void __launch_bounds__(kThreads, reduce_all_min_blocks<R, T>())
reduce_all_kernel(R r, const T* in, PartialSlot<typename R::Acc>* partial, unsigned* blocks_done,
                                  Out* out, int64_t n) {
  using P = Pack<T, V>;
  typename R::Acc acc[kLoads];
#pragma unroll
  for (int u = 0; u < kLoads; ++u) acc[u] = r.identity();
  const int64_t packs = n / V, stride = thread_count();
  int64_t i = thread_index();
  for (; i + (kLoads - 1) * stride < packs; i += kLoads * stride) {
    P x[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) x[u] = reinterpret_cast<const P*>(in)[i + u * stride];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
#pragma unroll
      for (int j = 0; j < V; ++j) acc[u] = r.step(acc[u], x[u].v[j], (i + u * stride) * V + j);
  }
  for (; i < packs; i += stride) {
    P x = reinterpret_cast<const P*>(in)[i];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[0] = r.step(acc[0], x.v[j], i * V + j);
  }
  for (int64_t k = packs * V + thread_index(); k < n; k += stride) acc[0] = r.step(acc[0], in[k], k);
#pragma unroll
  for (int u = 1; u < kLoads; ++u) acc[0] = r.merge(acc[0], acc[u]);
  acc[0] = block_merge(r, acc[0]);

  __shared__ bool last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x].value = acc[0];
    __threadfence();  // the partial is visible device-wide before the count says so
    last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();  // the partials counted before this block's are read after the count
  typename R::Acc merged = r.identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) merged = r.merge(merged, load_from_l2(partial + b));
  merged = block_merge(r, merged);
  if (threadIdx.x == 0) {
    *out = r.result(merged);
    *blocks_done = 0;  // ready for the next reduction, which the stream orders after this one
  }
}

// Contiguous rows (inner == 1): a block per row.
template <typename R, typename T, typename Out>
__global__ void reduce_rows_kernel(R r, const T* in, Out* out, int64_t rows, int64_t row_size) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // the same trip count block-wide
    typename R::Acc acc = r.identity();
    for (int64_t i = threadIdx.x; i < row_size; i += blockDim.x) acc = r.step(acc, in[row * row_size + i], i);
    acc = block_merge(r, acc);
    if (threadIdx.x == 0) out[row] = r.result(acc);
  }
}

// The middle dim of [outer, reduced, inner] (inner > 1): a thread per result, so
// neighbouring threads read neighbouring addresses.
template <typename R, typename T, typename Out>
__global__ void reduce_columns_kernel(R r, const T* in, Out* out, int64_t outer, int64_t reduced, int64_t inner) {
  for (int64_t o = thread_index(); o < outer * inner; o += thread_count()) {
    const T* column = in + (o / inner) * reduced * inner + o % inner;
    typename R::Acc acc = r.identity();
    for (int64_t k = 0; k < reduced; ++k) acc = r.step(acc, column[k * inner], k);
    out[o] = r.result(acc);
  }
}

template <typename T, typename R>
void run_reduction(const R& r, const native::ReduceIteration& it) {
  using Acc = typename R::Acc;
  using Out = decltype(r.result(r.identity()));
  const native::ReduceLayout& l = it.layout;
  if (it.out.numel() == 0) return;
  const T* in = l.input.data<T>();
  Out* out = it.out.data<Out>();
  if (l.outer == 1 && l.inner == 1) {
    const int64_t n = l.reduced;
    // The last block merges the partials: at most a few thousand, a few per thread.
    const int blocks = grid_for((n + 3) / 4);
    DataPtr partial = get_allocator(DeviceType::CUDA)->allocate(blocks * sizeof(PartialSlot<Acc>));
    auto* partials = static_cast<PartialSlot<Acc>*>(partial.get());
    unsigned* done = reduction_counter();
    constexpr int V = 16 / sizeof(T);
    if (aligned16(in)) reduce_all_kernel<V><<<blocks, kThreads>>>(r, in, partials, done, out, n);
    else reduce_all_kernel<1><<<blocks, kThreads>>>(r, in, partials, done, out, n);
    // `partial` goes back to the caching allocator, ordered after this kernel.
  } else if (l.inner == 1) {
    const int blocks = static_cast<int>(std::min<int64_t>(l.outer, 65535));
    reduce_rows_kernel<<<blocks, kThreads>>>(r, in, out, l.outer, l.reduced);
  } else {
    reduce_columns_kernel<<<grid_for(l.outer * l.inner), kThreads>>>(r, in, out, l.outer, l.reduced, l.inner);
  }
  check(cudaGetLastError(), "reduction kernel");
}

// The loop of `it` with Reducer<scalar_t> for its input's dtype.
template <template <typename> class Reducer>
void reduce(const native::ReduceIteration& it, const char* name) {
  if (!it.layout.input.defined()) return;
  TL_DISPATCH_ALL_TYPES(it.layout.input.dtype(), name, {
    run_reduction<scalar_t>(ops::make_reducer<Reducer, scalar_t>(), it);
  });
}

}  // namespace
}  // namespace tensorlet::cuda

namespace tensorlet::native {
using cuda::reduce;  // the loop TL_REDUCE_KERNELS runs

TL_REDUCE_KERNELS(cuda)

}  // namespace tensorlet::native
