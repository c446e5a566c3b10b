// CUDA kernels for fill_, copy_ (with dtype conversion), add, mul, sum and mm, and the
// host wrappers registered for the CUDA key (generated/RegisterCUDA.cpp). Result
// dtypes, broadcasting and out= checks come from the ops layer (binary_iteration,
// reduce_layout); dtypes reach the kernels only through the TL_DISPATCH_* macros
// (test_cuda.py greps this folder for anything else).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/BinaryOps.h"
#include "ops/Elementwise.h"
#include "ops/Reduce.h"
#include "ops/TensorIterator.h"
#include "ops/cuda/CudaUtils.h"

namespace tensorlet::cuda {
namespace {

constexpr int kThreads = 256;

__device__ int64_t offset_of(const Geometry& g, int operand, int64_t linear) {
  int64_t off = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    int64_t c = linear % g.sizes[d];
    linear /= g.sizes[d];
    off += c * g.strides[operand][d];
  }
  return off;
}

template <typename T>
__global__ void fill_kernel(T* out, Geometry g, int64_t n, T value) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[offset_of(g, 0, i)] = value;
}

template <int Bytes>
struct Chunk {
  unsigned char b[Bytes];
};

template <int Bytes>
__global__ void gather_kernel(Chunk<Bytes>* out, const Chunk<Bytes>* in, Geometry g, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[offset_of(g, 0, i)] = in[offset_of(g, 1, i)];
}

// Element i of `out` = element i of `in`, converted (C++'s conversion: nonzero -> true,
// float -> integer truncates toward zero, as torch's CPU and CUDA casts do).
template <typename Out, typename In>
__global__ void convert_kernel(Out* out, const In* in, Geometry g, int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[offset_of(g, 0, i)] = static_cast<Out>(in[offset_of(g, 1, i)]);
}

// `op` is one of ops/BinaryOps.h's functors: the loop body the CPU backend runs too.
template <typename T, typename Op>
__global__ void binary_kernel(T* out, const T* a, const T* b, Geometry g, int64_t n, Op op) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  out[offset_of(g, 0, i)] = op(a[offset_of(g, 1, i)], b[offset_of(g, 2, i)]);
}

// ---- contiguous fast paths: no index arithmetic, 16-byte loads and stores -------------
// Bandwidth-bound kernels reach the memory system's peak only with wide accesses and
// no per-element div/mod; the strided kernels above stay for views and broadcasting.
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <typename T>
constexpr int kPack = 16 / sizeof(T);  // float4 / double2

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

__device__ inline int64_t thread_index() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ inline int64_t thread_count() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Grid-stride loops over V-element packs, then the tail element by element. V is 1
// when an operand is not 16-byte aligned (a view with a storage offset).
template <typename T, int V, typename Op>
__global__ void binary_contiguous_kernel(T* out, const T* a, const T* b, int64_t n, Op op) {
  using P = Pack<T, V>;
  const int64_t packs = n / V;
  for (int64_t i = thread_index(); i < packs; i += thread_count()) {
    P x = reinterpret_cast<const P*>(a)[i], y = reinterpret_cast<const P*>(b)[i], r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = op(x.v[j], y.v[j]);
    reinterpret_cast<P*>(out)[i] = r;
  }
  for (int64_t i = packs * V + thread_index(); i < n; i += thread_count())
    out[i] = op(a[i], b[i]);
}

template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The block's total, in thread 0: warp shuffles, then the warps' totals. Every thread of
// the block must call it (it synchronizes the block).
template <typename T>
__device__ T block_sum(T acc) {
  __shared__ T warp_totals[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  acc = warp_sum(acc);
  if (lane == 0) warp_totals[warp] = acc;
  __syncthreads();
  acc = 0;
  if (warp == 0) acc = warp_sum(lane < static_cast<int>(blockDim.x / 32) ? warp_totals[lane] : T(0));
  __syncthreads();  // the next call may overwrite warp_totals
  return acc;
}

// One partial sum per block: per-thread sums over packs, then the block's total.
// Called twice: over the input, then (one block) over the partials. Each thread keeps
// kLoads independent 16-byte loads in flight (each with its own accumulator): with one
// load per iteration the sum measured 0.45 of the copy bandwidth on an H200, waiting
// on memory latency rather than bandwidth.
constexpr int kLoads = 4;

template <typename T, int V>
__global__ void sum_kernel(const T* in, T* partial, int64_t n) {
  using P = Pack<T, V>;
  T acc[kLoads] = {};
  const int64_t packs = n / V, stride = thread_count();
  int64_t i = thread_index();
  for (; i + (kLoads - 1) * stride < packs; i += kLoads * stride) {
    P x[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) x[u] = reinterpret_cast<const P*>(in)[i + u * stride];
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
#pragma unroll
      for (int j = 0; j < V; ++j) acc[u] += x[u].v[j];
  }
  for (; i < packs; i += stride) {
    P x = reinterpret_cast<const P*>(in)[i];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[0] += x.v[j];
  }
  for (int64_t k = packs * V + thread_index(); k < n; k += stride) acc[0] += in[k];
  T total = acc[0];
#pragma unroll
  for (int u = 1; u < kLoads; ++u) total += acc[u];
  T acc_block = block_sum(total);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc_block;
}

// Sums over the middle of a contiguous [outer, reduced, inner] block (inner > 1): one
// thread per output, so neighbouring threads read neighbouring addresses.
template <typename T>
__global__ void sum_middle_kernel(const T* in, T* out, int64_t outer, int64_t reduced, int64_t inner) {
  for (int64_t o = thread_index(); o < outer * inner; o += thread_count()) {
    const T* column = in + (o / inner) * reduced * inner + o % inner;
    T acc = 0;
    for (int64_t r = 0; r < reduced; ++r) acc += column[r * inner];
    out[o] = acc;
  }
}

// Sums each of `rows` contiguous rows of `row_size` elements (inner == 1): a block per row.
template <typename T>
__global__ void sum_rows_kernel(const T* in, T* out, int64_t rows, int64_t row_size) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // the same trip count block-wide
    T acc = 0;
    for (int64_t i = threadIdx.x; i < row_size; i += blockDim.x) acc += in[row * row_size + i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) out[row] = acc;
  }
}

// Enough blocks to fill every SM several times over; more only adds scheduling.
int grid_for(int64_t work_items) {
  int device = 0, sms = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const int64_t cap = static_cast<int64_t>(std::max(sms, 1)) * 8;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cap, blocks_for(work_items, kThreads))));
}

Geometry geometry(std::initializer_list<const Tensor*> operands);

// out = op(a, b) over operands of one shape: 16-byte packs where every operand is
// contiguous (and aligned), the strided kernel otherwise.
template <typename T, typename Op>
void launch_binary(const Tensor& out, const Tensor& a, const Tensor& b, int64_t n, Op op) {
  constexpr int V = kPack<T>;
  T* o = out.data<T>();
  const T *x = a.data<T>(), *y = b.data<T>();
  if (out.is_contiguous() && a.is_contiguous() && b.is_contiguous()) {
    if (aligned16(o) && aligned16(x) && aligned16(y))
      binary_contiguous_kernel<T, V><<<grid_for((n + V - 1) / V), kThreads>>>(o, x, y, n, op);
    else
      binary_contiguous_kernel<T, 1><<<grid_for(n), kThreads>>>(o, x, y, n, op);
  } else {
    binary_kernel<<<blocks_for(n, kThreads), kThreads>>>(o, x, y, geometry({&out, &a, &b}), n, op);
  }
}

template <typename T>
void launch_sum(const T* in, T* partial, T* out, int64_t n, int blocks) {
  constexpr int V = kPack<T>;
  if (aligned16(in)) sum_kernel<T, V><<<blocks, kThreads>>>(in, partial, n);
  else sum_kernel<T, 1><<<blocks, kThreads>>>(in, partial, n);
  sum_kernel<T, 1><<<1, kThreads>>>(partial, out, blocks);
}

constexpr int kTile = 16;

template <typename T>
__global__ void mm_kernel(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k) {
  __shared__ T ta[kTile][kTile];
  __shared__ T tb[kTile][kTile];
  int64_t row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  T acc = 0;
  for (int64_t p0 = 0; p0 < k; p0 += kTile) {
    ta[threadIdx.y][threadIdx.x] = (row < m && p0 + threadIdx.x < k) ? a[row * k + p0 + threadIdx.x] : T(0);
    tb[threadIdx.y][threadIdx.x] = (col < n && p0 + threadIdx.y < k) ? b[(p0 + threadIdx.y) * n + col] : T(0);
    __syncthreads();
    for (int q = 0; q < kTile; ++q) acc += ta[threadIdx.y][q] * tb[q][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

Geometry geometry(std::initializer_list<const Tensor*> operands) {
  const Tensor& first = **operands.begin();
  TL_CHECK(first.dim() <= kMaxDims, "CUDA kernels support at most ", kMaxDims, " dims");
  Geometry g{};
  g.ndim = static_cast<int>(first.dim());
  for (int d = 0; d < g.ndim; ++d) g.sizes[d] = first.sizes()[d];
  int k = 0;
  for (const Tensor* t : operands) {
    for (int d = 0; d < g.ndim; ++d) g.strides[k][d] = t->strides()[d];
    ++k;
  }
  return g;
}

// The loops of add and mul, for every dtype; `it` is the shared layer's preparation.
Tensor binary(BinaryOp op, const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
  const bool mul = op == BinaryOp::Mul;
  BinaryIteration it = binary_iteration(op, self, other, alpha, std::move(out));
  const int64_t n = it.target.numel();
  if (n == 0) return it.out;
  const Tensor& target = it.target;
  TL_DISPATCH_ALL_TYPES(it.compute, binary_name(op), {
    if (mul) launch_binary<scalar_t>(target, it.a, it.b, n, ops::Mul<scalar_t>{});
    else launch_binary<scalar_t>(target, it.a, it.b, n, ops::Add<scalar_t>{alpha.to<scalar_t>()});
  });
  check(cudaGetLastError(), mul ? "mul kernel" : "add kernel");
  if (!target.is_same(it.out)) tensorlet::copy_(it.out, target, false);
  return it.out;
}

// dst = src converted, both on the device, any layouts (same shape): one dispatch on
// each side (a nested dispatch would shadow its own scalar_t).
template <typename In>
void launch_convert(const Tensor& dst, const Tensor& src, const Geometry& g, int64_t n) {
  TL_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", {
    convert_kernel<scalar_t, In><<<blocks_for(n, kThreads), kThreads>>>(dst.data<scalar_t>(), src.data<In>(), g, n);
  });
}

void convert(const Tensor& dst, const Tensor& src) {
  const int64_t n = dst.numel();
  Geometry g = geometry({&dst, &src});
  TL_DISPATCH_ALL_TYPES(src.dtype(), "copy_", { launch_convert<scalar_t>(dst, src, g, n); });
  check(cudaGetLastError(), "copy_ (conversion) kernel");
}

}  // namespace
}  // namespace tensorlet::cuda

namespace tensorlet::native {
using namespace tensorlet::cuda;

Tensor fill_cuda_(const Tensor& self, const Scalar& value) {
  int64_t n = self.numel();
  if (n == 0) return self;
  Geometry g = geometry({&self});
  TL_DISPATCH_ALL_TYPES(self.dtype(), "fill_", {
    fill_kernel<<<blocks_for(n, kThreads), kThreads>>>(self.data<scalar_t>(), g, n, value.to<scalar_t>());
  });
  check(cudaGetLastError(), "fill_ kernel");
  return self;
}

Tensor copy_cuda_(const Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  Tensor source = expand_view(src, self.sizes());
  if (self.numel() == 0) return self;
  if (source.dtype() != self.dtype()) {
    if (self.device().is_cuda() && source.device().is_cuda()) {
      convert(self, source);
      return self;
    }
    // Across the transfer: convert on the host side.
    if (source.device().is_cpu()) source = cast_to(tensorlet::contiguous(source), self.dtype());
    else return tensorlet::copy_(self, cast_to(tensorlet::_to_copy(source, std::nullopt, Device(DeviceType::CPU)), self.dtype()), false);
  }
  size_t bytes = static_cast<size_t>(self.numel()) * element_size(self.dtype());
  bool dst_cuda = self.device().is_cuda(), src_cuda = source.device().is_cuda();
  if (dst_cuda && src_cuda && self.is_contiguous() && source.is_contiguous()) {
    // Ordered with the kernels on the default stream, like them asynchronous to the host.
    check(cudaMemcpyAsync(self.data_ptr(), source.data_ptr(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync D2D");
    return self;
  }
  if (dst_cuda && src_cuda) {
    Geometry g = geometry({&self, &source});
    int64_t n = self.numel();
    switch (element_size(self.dtype())) {
      case 1: gather_kernel<1><<<blocks_for(n, kThreads), kThreads>>>(static_cast<Chunk<1>*>(self.data_ptr()), static_cast<const Chunk<1>*>(source.data_ptr()), g, n); break;
      case 4: gather_kernel<4><<<blocks_for(n, kThreads), kThreads>>>(static_cast<Chunk<4>*>(self.data_ptr()), static_cast<const Chunk<4>*>(source.data_ptr()), g, n); break;
      default: gather_kernel<8><<<blocks_for(n, kThreads), kThreads>>>(static_cast<Chunk<8>*>(self.data_ptr()), static_cast<const Chunk<8>*>(source.data_ptr()), g, n); break;
    }
    check(cudaGetLastError(), "copy_ kernel");
    return self;
  }
  // Host <-> device: stage through contiguous buffers on each side.
  if (dst_cuda) {
    Tensor host = tensorlet::contiguous(source);
    Tensor dev = self.is_contiguous() ? self : empty_tensor(self.sizes(), self.dtype(), self.device());
    check(cudaMemcpy(dev.data_ptr(), host.data_ptr(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    if (!dev.is_same(self)) copy_cuda_(self, dev, false);
  } else {
    Tensor dev = tensorlet::contiguous(source);
    Tensor host = self.is_contiguous() ? self : empty_tensor(self.sizes(), self.dtype(), self.device());
    check(cudaMemcpy(host.data_ptr(), dev.data_ptr(), bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    if (!host.is_same(self)) tensorlet::copy_(self, host, false);
  }
  return self;
}

Tensor add_cuda(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binary(BinaryOp::Add, self, other, alpha, Tensor());
}
Tensor add_cuda_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binary(BinaryOp::Add, self, other, alpha, self);
}
Tensor add_out_cuda(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  return binary(BinaryOp::Add, self, other, alpha, out);
}
Tensor mul_cuda(const Tensor& self, const Tensor& other) { return binary(BinaryOp::Mul, self, other, Scalar(1), Tensor()); }
Tensor mul_cuda_(const Tensor& self, const Tensor& other) {
  return binary(BinaryOp::Mul, self, other, Scalar(1), self);
}
Tensor mul_out_cuda(const Tensor& self, const Tensor& other, const Tensor& out) {
  return binary(BinaryOp::Mul, self, other, Scalar(1), out);
}

Tensor sum_cuda(const Tensor& self, const std::optional<std::vector<int64_t>>& dim, bool keepdim,
                const std::optional<ScalarType>& dtype) {
  TL_CHECK(!dtype || *dtype == self.dtype(), "sum(dtype=) is not implemented on CUDA");
  // Integer sums accumulate in int64 (torch's rule): no CUDA loop for that yet.
  return TL_DISPATCH_FLOAT_TYPES(self.dtype(), "sum (CUDA)", {
    ReduceLayout l = reduce_layout(self, reduction_dims(dim, self.dim()), keepdim);
    Tensor out = empty_tensor(l.out_shape, self.dtype(), self.device());
    if (out.numel() == 0) return out;
    const Tensor& x = l.input;
    if (l.outer == 1 && l.inner == 1) {  // everything: the bandwidth-bound two-pass sum
      const int64_t n = l.reduced;
      // The second pass is one block: at most a few thousand partials, a few per thread.
      const int blocks = grid_for((n + 3) / 4);
      Tensor partial = empty_tensor({blocks}, x.dtype(), x.device());
      launch_sum(x.data<scalar_t>(), partial.data<scalar_t>(), out.data<scalar_t>(), n, blocks);
    } else if (l.inner == 1) {
      const int blocks = static_cast<int>(std::min<int64_t>(l.outer, 65535));
      sum_rows_kernel<scalar_t><<<blocks, kThreads>>>(x.data<scalar_t>(), out.data<scalar_t>(), l.outer, l.reduced);
    } else {
      const int blocks = grid_for(l.outer * l.inner);
      sum_middle_kernel<scalar_t><<<blocks, kThreads>>>(x.data<scalar_t>(), out.data<scalar_t>(), l.outer, l.reduced,
                                                        l.inner);
    }
    check(cudaGetLastError(), "sum kernel");
    return out;
  });
}

Tensor mm_cuda(const Tensor& self, const Tensor& mat2) {
  TL_CHECK(self.dim() == 2 && mat2.dim() == 2 && self.size(1) == mat2.size(0), "mm: mat1 and mat2 shapes cannot be multiplied");
  TL_CHECK_TYPE(self.dtype() == mat2.dtype(), "expected m1 and m2 to have the same dtype");
  return TL_DISPATCH_FLOAT_TYPES(self.dtype(), "mm (CUDA)", {
    Tensor a = tensorlet::contiguous(self), b = tensorlet::contiguous(mat2);
    int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    Tensor c = empty_tensor({m, n}, a.dtype(), a.device());
    if (c.numel() == 0) return c;
    dim3 threads(kTile, kTile), grid(blocks_for(n, kTile), blocks_for(m, kTile));
    mm_kernel<scalar_t><<<grid, threads>>>(a.data<scalar_t>(), b.data<scalar_t>(), c.data<scalar_t>(), m, n, k);
    check(cudaGetLastError(), "mm kernel");
    return c;
  });
}

}  // namespace tensorlet::native
