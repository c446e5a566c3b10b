// Factories, clones and conversions (fill_ and copy_, their loops, are in ops/cpu and ops/cuda).
#include <cmath>
#include <mutex>
#include <random>

#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Factories.h"
#include "ops/Random.h"

namespace tensorlet {

namespace {
constexpr uint64_t kDefaultSeed = 67280421310721ULL;

// The default generator: the CPU's engine, and the CUDA backend's Philox key and next
// counter (reserve_philox_counters), both set by manual_seed.
struct Generator {
  std::mutex mutex;
  std::mt19937_64 engine{kDefaultSeed};
  uint64_t philox_seed = kDefaultSeed;
  uint64_t philox_offset = 0;
};
Generator& default_generator() {
  static Generator g;
  return g;
}

ScalarType infer_dtype(const Scalar& v) {
  return v.is_floating_point() ? kDefaultFloat : v.is_bool() ? ScalarType::Bool : ScalarType::Long;
}
}  // namespace

void manual_seed(uint64_t seed) {
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.engine.seed(seed);
  g.philox_seed = seed;
  g.philox_offset = 0;
}

PhiloxState reserve_philox_counters(uint64_t counters) {
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  PhiloxState state{g.philox_seed, g.philox_offset};
  g.philox_offset += counters;
  return state;
}

namespace native {

Tensor empty_generic(const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                     const std::optional<Device>& device) {
  return empty_tensor(size, dtype.value_or(kDefaultFloat), device.value_or(Device(DeviceType::CPU)));
}

Tensor full_impl(const std::vector<int64_t>& size, const Scalar& fill_value, const std::optional<ScalarType>& dtype,
                 const std::optional<Device>& device) {
  Tensor t = tensorlet::empty(size, dtype.value_or(infer_dtype(fill_value)), device);
  return tensorlet::fill_(t, fill_value);
}

Tensor zeros_impl(const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                  const std::optional<Device>& device) {
  return full_impl(size, Scalar(0), dtype.value_or(kDefaultFloat), device);
}

Tensor ones_impl(const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                 const std::optional<Device>& device) {
  return full_impl(size, Scalar(1), dtype.value_or(kDefaultFloat), device);
}

Tensor empty_like_composite(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return tensorlet::empty(self.sizes(), dtype.value_or(self.dtype()), self.device());
}
Tensor zeros_like_composite(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return tensorlet::zeros(self.sizes(), dtype.value_or(self.dtype()), self.device());
}
Tensor ones_like_composite(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return tensorlet::ones(self.sizes(), dtype.value_or(self.dtype()), self.device());
}

Tensor arange_composite(const Scalar& end, const std::optional<ScalarType>& dtype, const std::optional<Device>& device) {
  return tensorlet::arange(Scalar(0), end, Scalar(1), dtype, device);
}

ArangeSpec arange_spec(const Scalar& start, const Scalar& end, const Scalar& step,
                       const std::optional<ScalarType>& dtype) {
  ArangeSpec spec;
  spec.floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  spec.dtype = dtype.value_or(spec.floating ? kDefaultFloat : ScalarType::Long);
  // As torch ("arange_cpu" not implemented for 'Bool'): a range of bools has no step.
  TL_CHECK(spec.dtype != ScalarType::Bool, "arange: not implemented for 'bool'");
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  TL_CHECK_VALUE(st != 0, "step must be nonzero");
  TL_CHECK_VALUE((st > 0 && e >= s) || (st < 0 && e <= s), "upper bound and larger bound inconsistent with step sign");
  spec.n = static_cast<int64_t>(std::ceil((e - s) / st));
  spec.start = s, spec.step = st;
  if (!spec.floating) spec.start_int = start.to_int(), spec.step_int = step.to_int();
  return spec;
}

Tensor arange_generic(const Scalar& start, const Scalar& end, const Scalar& step,
                      const std::optional<ScalarType>& dtype, const std::optional<Device>& device) {
  const ArangeSpec spec = arange_spec(start, end, step, dtype);
  const int64_t n = spec.n;
  Tensor out = empty_tensor({n}, spec.dtype, device.value_or(Device(DeviceType::CPU)));
  if (!out.device().is_cpu()) return out;
  TL_DISPATCH_ALL_TYPES(spec.dtype, "arange", {
    scalar_t* p = out.data<scalar_t>();
    if (spec.floating) {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(spec.start + static_cast<double>(i) * spec.step);
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<scalar_t>(spec.start_int + i * spec.step_int);
    }
  });
  return out;
}

ScalarType random_dtype(const char* name, const std::optional<ScalarType>& dtype) {
  const ScalarType dt = dtype.value_or(kDefaultFloat);
  // A dtype refused as torch refuses it: RuntimeError ("check_uniform_bounds" not implemented for 'Long').
  TL_CHECK(is_floating_type(dt), name, ": not implemented for '", scalar_type_name(dt), "' (a floating point dtype is needed)");
  return dt;
}

namespace {
template <typename Fill>
Tensor random_tensor(const char* name, const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                     const std::optional<Device>& device, Fill fill) {
  const ScalarType dt = random_dtype(name, dtype);
  Tensor out = empty_tensor(size, dt, device.value_or(Device(DeviceType::CPU)));
  if (!out.device().is_cpu()) return out;
  Generator& g = default_generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  TL_DISPATCH_FLOAT_TYPES(dt, name, {
    scalar_t* p = out.data<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = static_cast<scalar_t>(fill(g.engine));
  });
  return out;
}
}  // namespace

Tensor rand_generic(const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                    const std::optional<Device>& device) {
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  return random_tensor("rand", size, dtype, device, [&](std::mt19937_64& e) { return dist(e); });
}

Tensor randn_generic(const std::vector<int64_t>& size, const std::optional<ScalarType>& dtype,
                     const std::optional<Device>& device) {
  std::normal_distribution<double> dist(0.0, 1.0);
  return random_tensor("randn", size, dtype, device, [&](std::mt19937_64& e) { return dist(e); });
}

Tensor clone_impl(const Tensor& self) {
  Tensor out = tensorlet::empty(self.sizes(), self.dtype(), self.device());
  return tensorlet::copy_(out, self, false);
}

Tensor to_copy_impl(const Tensor& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device) {
  Tensor out = tensorlet::empty(self.sizes(), dtype.value_or(self.dtype()), device.value_or(self.device()));
  return tensorlet::copy_(out, self, false);
}

Tensor to_composite(const Tensor& self, const std::optional<ScalarType>& dtype, const std::optional<Device>& device,
                    bool copy) {
  bool same_dtype = !dtype || *dtype == self.dtype();
  bool same_device = !device || device->type == self.device().type;
  if (same_dtype && same_device && !copy) return self;
  return tensorlet::_to_copy(self, dtype, device);
}

Tensor contiguous_composite(const Tensor& self) { return self.is_contiguous() ? self : tensorlet::clone(self); }

Tensor detach_impl(const Tensor& self) {
  Tensor out = make_view(self, self.sizes(), self.strides(), self.storage_offset());
  out.impl()->set_is_view(false);
  return out;
}

}  // namespace native
}  // namespace tensorlet
