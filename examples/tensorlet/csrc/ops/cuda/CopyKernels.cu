// The CUDA loops of fill_ and copy_ (within the device, with dtype conversion, and
// host <-> device), in the one elementwise kernel (Loops.cuh); the host wrappers are
// registered for the CUDA key (generated/RegisterCUDA.cpp). dtypes reach the loops only
// through the TL_DISPATCH_* macros (test_cuda.py greps this folder for anything else).
#include <cuda_runtime.h>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/TensorIterator.h"
#include "ops/cuda/Loops.cuh"

namespace tensorlet::cuda {
namespace {

template <typename T>
struct Fill {
  T value;
  __device__ T operator()() const { return value; }
};

// C++'s conversion: nonzero -> true, float -> integer truncates toward zero, as torch's
// CPU and CUDA casts do; Out = In is a plain (strided) copy.
template <typename Out, typename In>
struct Convert {
  __device__ Out operator()(In v) const { return static_cast<Out>(v); }
};

// dst = src converted, both on the device, any layouts (same shape): one dispatch on
// each side (a nested dispatch would shadow its own scalar_t).
template <typename In>
void launch_convert(const Tensor& dst, const Tensor& src) {
  TL_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", { launch_elementwise(Convert<scalar_t, In>{}, dst, src); });
}

void convert(const Tensor& dst, const Tensor& src) {
  TL_DISPATCH_ALL_TYPES(src.dtype(), "copy_", { launch_convert<scalar_t>(dst, src); });
  check(cudaGetLastError(), "copy_ kernel");
}

}  // namespace
}  // namespace tensorlet::cuda

namespace tensorlet::native {
using namespace tensorlet::cuda;

Tensor fill_cuda_(const Tensor& self, const Scalar& value) {
  TL_DISPATCH_ALL_TYPES(self.dtype(), "fill_", { launch_elementwise(Fill<scalar_t>{value.to<scalar_t>()}, self); });
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
  if (dst_cuda && src_cuda) {  // a strided copy within the device
    convert(self, source);
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

}  // namespace tensorlet::native
