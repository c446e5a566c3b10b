#pragma once
// The CUDA backend's one elementwise loop: out[i] = op(in[i]...) for any functor of
// ops/BinaryOps.h, UnaryOps.h (or a conversion, a fill), any number of inputs, any
// layouts. The element types come from the functor's signature, so a caller passes
// the functor and the tensors; the shared layer has already given every operand the
// output's shape and the functor's dtypes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {

__device__ inline int64_t thread_index() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ inline int64_t thread_count() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

__device__ inline int64_t offset_of(const Geometry& g, int operand, int64_t linear) {
  int64_t off = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64_t c = linear % g.sizes[d];
    linear /= g.sizes[d];
    off += c * g.strides[operand][d];
  }
  return off;
}

// V consecutive elements, loaded and stored as one (up to 16-byte) access.
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename Op, typename... In, size_t... K>
__device__ auto apply_strided(const Op& op, const Geometry& g, int64_t i, std::index_sequence<K...>,
                              const In*... in) {
  return op(in[offset_of(g, static_cast<int>(K) + 1, i)]...);
}

// Any layouts: the operands' strides in `g`, one element per thread.
template <typename Op, typename Out, typename... In>
__global__ void elementwise_kernel(Op op, Geometry g, int64_t n, Out* out, const In*... in) {
  const int64_t i = thread_index();
  if (i < n) out[offset_of(g, 0, i)] = apply_strided(op, g, i, std::index_sequence_for<In...>{}, in...);
}

template <int V, typename Op, typename... In>
__device__ auto apply_packed(const Op& op, Pack<In, V>... x) {
  Pack<decltype(op(x.v[0]...)), V> r;
#pragma unroll
  for (int j = 0; j < V; ++j) r.v[j] = op(x.v[j]...);
  return r;
}

// Contiguous operands: no index arithmetic and V-element packs (V = 1 when an operand
// is not 16-byte aligned, a view with a storage offset), then the tail element by
// element. Bandwidth-bound loops reach the memory system's peak only with wide
// accesses and no per-element div/mod.
template <int V, typename Op, typename Out, typename... In>
__global__ void elementwise_contiguous_kernel(Op op, int64_t n, Out* out, const In*... in) {
  const int64_t packs = n / V;
  for (int64_t i = thread_index(); i < packs; i += thread_count())
    reinterpret_cast<Pack<Out, V>*>(out)[i] = apply_packed<V>(op, reinterpret_cast<const Pack<In, V>*>(in)[i]...);
  for (int64_t i = packs * V + thread_index(); i < n; i += thread_count()) out[i] = op(in[i]...);
}

template <typename Method>
struct Signature;

template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...) const> {
  // out = op(in...): each tensor holds the functor's parameter type, `out` its result type.
  template <typename Op, typename... Tensors>
  static void launch(const Op& op, const Tensor& out, const Tensors&... in) {
    static_assert(sizeof...(A) == sizeof...(Tensors), "one tensor per functor parameter");
    const int64_t n = out.numel();
    if (n == 0) return;
    R* o = out.data<R>();
    if (out.is_contiguous() && (in.is_contiguous() && ...)) {
      constexpr int V = static_cast<int>(16 / std::max({sizeof(R), sizeof(A)...}));
      if (aligned16(o) && (aligned16(in.data_ptr()) && ...))
        elementwise_contiguous_kernel<V><<<grid_for((n + V - 1) / V), kThreads>>>(op, n, o, in.template data<A>()...);
      else
        elementwise_contiguous_kernel<1><<<grid_for(n), kThreads>>>(op, n, o, in.template data<A>()...);
    } else {
      elementwise_kernel<<<blocks_for(n, kThreads), kThreads>>>(op, geometry({&out, &in...}), n, o,
                                                                 in.template data<A>()...);
    }
  }
};

// out = op(in...) elementwise on the current stream; every tensor has out's shape.
template <typename Op, typename... Tensors>
void launch_elementwise(const Op& op, const Tensor& out, const Tensors&... in) {
  Signature<decltype(&Op::operator())>::launch(op, out, in...);
}

}  // namespace tensorlet::cuda
