// The CUDA loops of arange, rand and randn. arange's dtype and element count come from
// the shared layer (ops/Factories.h), as for the CPU; rand and randn draw from Philox4x32-10
// (ops/Philox.h) keyed by tensorlet's seed, each call reserving fresh counters of the
// default generator (ops/Random.h), so manual_seed repeats a sequence. The CPU's engine is
// another generator: a seed gives different numbers on the two backends, as in torch.
#include <cuda_runtime.h>

#include <cmath>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Factories.h"
#include "ops/Philox.h"
#include "ops/Random.h"
#include "ops/cuda/Loops.cuh"

namespace tensorlet::cuda {
namespace {

// Element i is start + i * step, in double for a floating range (never fused into an FMA,
// whose single rounding the CPU's loop does not have) or int64 for an integer one, then
// cast to T: the CPU's values, bit for bit.
template <typename T>
__global__ void arange_kernel(T* out, int64_t n, bool floating, double start, double step, int64_t start_int,
                              int64_t step_int) {
  for (int64_t i = thread_index(); i < n; i += thread_count())
    out[i] = floating ? static_cast<T>(__dadd_rn(start, __dmul_rn(static_cast<double>(i), step)))
                      : static_cast<T>(start_int + i * step_int);
}

// Values per Philox counter: four floats (a word each) or two doubles (two words each).
template <typename T>
constexpr int kPerCounter = sizeof(T) == 4 ? 4 : 2;

// Box-Muller: two standard normals from a uniform in (0, 1] and one in [0, 1).
template <typename T>
__device__ void box_muller(T u_open0, T u, T* first, T* second) {
  if constexpr (sizeof(T) == 4) {
    const float r = sqrtf(-2.0f * logf(u_open0));
    float s, c;
    sincospif(2.0f * u, &s, &c);
    *first = r * c, *second = r * s;
  } else {
    const double r = ::sqrt(-2.0 * ::log(u_open0));
    double s, c;
    ::sincospi(2.0 * u, &s, &c);
    *first = r * c, *second = r * s;
  }
}

// Counter `offset + c` fills elements [c * V, c * V + V): the values depend on the seed,
// the offset and the index only, never on the launch geometry.
template <bool Normal, typename T>
__global__ void random_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset) {
  constexpr int V = kPerCounter<T>;
  const int64_t counters = (n + V - 1) / V;
  for (int64_t c = thread_index(); c < counters; c += thread_count()) {
    const Philox4x32 w = philox_at(seed, offset + static_cast<uint64_t>(c));
    T v[V];
    if constexpr (sizeof(T) == 4) {
#pragma unroll
      for (int p = 0; p < 2; ++p) {
        if constexpr (Normal)
          box_muller(uniform_float_open0(w.v[2 * p]), uniform_float(w.v[2 * p + 1]), &v[2 * p], &v[2 * p + 1]);
        else
          v[2 * p] = uniform_float(w.v[2 * p]), v[2 * p + 1] = uniform_float(w.v[2 * p + 1]);
      }
    } else if constexpr (Normal) {
      box_muller(uniform_double_open0(w.v[0], w.v[1]), uniform_double(w.v[2], w.v[3]), &v[0], &v[1]);
    } else {
      v[0] = uniform_double(w.v[0], w.v[1]), v[1] = uniform_double(w.v[2], w.v[3]);
    }
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (c * V + j < n) out[c * V + j] = v[j];
  }
}

template <bool Normal>
Tensor random_cuda(const char* name, const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                   const std::optional<Device>& device) {
  Tensor out = empty_tensor(size, native::random_dtype(name, dtype), device.value_or(Device(DeviceType::CUDA)));
  const int64_t n = out.numel();
  if (n == 0) return out;
  TL_DISPATCH_FLOAT_TYPES(out.dtype(), name, {
    constexpr int V = kPerCounter<scalar_t>;
    const int64_t counters = (n + V - 1) / V;
    const PhiloxState state = reserve_philox_counters(static_cast<uint64_t>(counters));
    random_kernel<Normal><<<grid_for(counters), kThreads>>>(out.data<scalar_t>(), n, state.seed, state.offset);
  });
  check(cudaGetLastError(), name);
  return out;
}

}  // namespace
}  // namespace tensorlet::cuda

namespace tensorlet::native {

Tensor arange_cuda(const Scalar& start, const Scalar& end, const Scalar& step, const std::optional<ScalarType>& dtype,
                   const std::optional<Device>& device) {
  const ArangeSpec spec = arange_spec(start, end, step, dtype);
  Tensor out = empty_tensor({spec.n}, spec.dtype, device.value_or(Device(DeviceType::CUDA)));
  if (spec.n == 0) return out;
  TL_DISPATCH_ALL_TYPES(spec.dtype, "arange", {
    cuda::arange_kernel<<<cuda::grid_for(spec.n), cuda::kThreads>>>(out.data<scalar_t>(), spec.n, spec.floating,
                                                                   spec.start, spec.step, spec.start_int,
                                                                   spec.step_int);
  });
  cuda::check(cudaGetLastError(), "arange");
  return out;
}

Tensor rand_cuda(const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                 const std::optional<Device>& device) {
  return cuda::random_cuda<false>("rand", size, dtype, device);
}

Tensor randn_cuda(const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                  const std::optional<Device>& device) {
  return cuda::random_cuda<true>("randn", size, dtype, device);
}

}  // namespace tensorlet::native
