#include "ops/TensorIterator.h"

#include <algorithm>

#include "generated/Functions.h"

namespace tensorlet {

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TL_CHECK(x == y || x == 1 || y == 1, "The size of tensor a (", x, ") must match the size of tensor b (", y,
             ") at non-singleton dimension ", i);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

namespace {
int category(ScalarType t) { return t == ScalarType::Bool ? 0 : is_floating_type(t) ? 2 : 1; }
}  // namespace

ScalarType result_type(std::initializer_list<const Tensor*> operands) {
  // priority 0: dimensioned tensors, 1: 0-dim tensors, 2: wrapped numbers
  ScalarType best[3] = {ScalarType::Undefined, ScalarType::Undefined, ScalarType::Undefined};
  for (const Tensor* t : operands) {
    if (!t->defined()) continue;
    int p = t->impl()->is_wrapped_number() ? 2 : t->dim() == 0 ? 1 : 0;
    ScalarType dt = t->dtype();
    // A wrapped Python float joins as the default float type, not float64.
    if (p == 2 && is_floating_type(dt)) dt = kDefaultFloat;
    best[p] = best[p] == ScalarType::Undefined ? dt : promote_types(best[p], dt);
  }
  ScalarType r = best[0];
  for (int p = 1; p < 3; ++p) {
    if (best[p] == ScalarType::Undefined) continue;
    if (r == ScalarType::Undefined) r = best[p];
    else if (category(best[p]) > category(r)) r = p == 2 && is_floating_type(best[p]) ? kDefaultFloat : best[p];
  }
  // Only wrapped numbers: a Python float on its own becomes the default float dtype, ints become int64.
  return r;
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_type(from) && !is_floating_type(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

Device common_device(std::initializer_list<const Tensor*> operands) {
  Device dev;
  bool have = false;
  for (const Tensor* t : operands) {
    if (!t->defined()) continue;
    Device d = t->device();
    if (d.is_cpu() && t->dim() == 0) continue;  // CPU scalars may join any device
    if (!have) {
      dev = d;
      have = true;
    } else {
      TL_CHECK(d.type == dev.type, "Expected all tensors to be on the same device, but found at least two devices, ",
               dev.str(), " and ", d.str(), "!");
    }
  }
  return have ? dev : Device(DeviceType::CPU);
}

Tensor expand_view(const Tensor& t, const std::vector<int64_t>& shape) {
  if (t.sizes() == shape) return t;
  size_t lead = shape.size() - t.sizes().size();
  std::vector<int64_t> strides(shape.size(), 0);
  for (size_t i = 0; i < t.sizes().size(); ++i) {
    int64_t s = t.sizes()[i];
    TL_CHECK(s == shape[lead + i] || s == 1, "cannot expand ", t.describe(), " to ", shape_str(shape));
    strides[lead + i] = s == 1 ? 0 : t.strides()[i];
  }
  return make_view(t, shape, strides, t.storage_offset());
}

Tensor cast_to(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = empty_tensor(t.sizes(), dtype, t.device());
  tensorlet::copy_(out, t, false);
  if (t.impl()->is_wrapped_number()) out.impl()->set_wrapped_number(true);
  return out;
}

void prepare_out(const Tensor& out, const std::vector<int64_t>& shape, ScalarType result, Device device,
                 const char* op) {
  TL_CHECK(out.device().type == device.type, op, ": the out= tensor is on ", out.device().str(),
           " but the inputs are on ", device.str());
  TL_CHECK(can_cast(result, out.dtype()), op, ": result type ", scalar_type_name(result),
           " can't be cast to the desired output type ", scalar_type_name(out.dtype()));
  if (out.sizes() == shape) return;
  TL_CHECK(out.numel() == 0, op, ": output with shape ", shape_str(out.sizes()), " doesn't match the broadcast shape ",
           shape_str(shape));
  // Resizing an empty out= tensor, as PyTorch does.
  Tensor fresh = empty_tensor(shape, out.dtype(), out.device());
  out.impl()->set_storage(fresh.impl()->storage());
  out.impl()->set_geometry(shape, contiguous_strides(shape), 0);
}

LoopPlan make_loop_plan(std::initializer_list<const Tensor*> operands) {
  LoopPlan plan;
  const Tensor& first = **operands.begin();
  for (const Tensor* t : operands) {
    TL_CHECK(t->sizes() == first.sizes(), "internal: loop operands must share a shape");
    plan.data[plan.num_operands] = static_cast<char*>(t->data_ptr());
    plan.strides[plan.num_operands] = {};
    ++plan.num_operands;
  }
  // Drop size-1 dims, then merge neighbours whose strides line up for every operand.
  int n = plan.num_operands;
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides(n);
  for (size_t d = 0; d < first.sizes().size(); ++d) {
    if (first.sizes()[d] == 1) continue;
    int64_t size = first.sizes()[d];
    bool merge = !shape.empty();
    int k = 0;
    for (const Tensor* t : operands) {
      if (merge && strides[k].back() != t->strides()[d] * size) merge = false;
      ++k;
    }
    if (merge) {
      shape.back() *= size;
      k = 0;
      for (const Tensor* t : operands) strides[k++].back() = t->strides()[d];
    } else {
      shape.push_back(size);
      k = 0;
      for (const Tensor* t : operands) strides[k++].push_back(t->strides()[d]);
    }
  }
  if (shape.empty()) {
    shape.push_back(first.numel());  // 0-dim (one element) or everything size-1
    for (auto& s : strides) s.push_back(1);
  }
  plan.shape = std::move(shape);
  for (int k = 0; k < n; ++k) plan.strides[k] = std::move(strides[k]);
  return plan;
}

}  // namespace tensorlet
