#pragma once
// Shared machinery of the elementwise and reduction operators: broadcasting,
// PyTorch type promotion, and the plan a backend loop walks (shape plus per
// operand strides, with dimensions coalesced where the memory allows).
#include <initializer_list>
#include <vector>

#include "core/Tensor.h"

namespace tensorlet {

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// PyTorch's result_type: dimensioned tensors outrank 0-dim tensors, which
// outrank wrapped Python numbers; a lower-ranked operand only matters when it
// belongs to a higher category (bool < integer < floating point).
ScalarType result_type(std::initializer_list<const Tensor*> operands);

// Whether a value of type `from` may be written into a tensor of type `to`
// (no float -> integer, no number -> bool), as PyTorch checks for out= / in-place.
bool can_cast(ScalarType from, ScalarType to);

// The device the operands agree on; 0-dim CPU tensors may join any device.
Device common_device(std::initializer_list<const Tensor*> operands);

// Internal helpers below bypass the dispatcher (no autograd, no tracing).
Tensor expand_view(const Tensor& t, const std::vector<int64_t>& shape);
Tensor cast_to(const Tensor& t, ScalarType dtype);  // `t` itself when it has that dtype already
// Checks/prepares an out= tensor for a result of `shape` and dtype `result` computed on
// `device`: refuses another device, a wrong shape or an unsafe cast; resizes an empty one.
void prepare_out(const Tensor& out, const std::vector<int64_t>& shape, ScalarType result, Device device,
                 const char* op);

constexpr int kMaxOperands = 4;

struct LoopPlan {
  std::vector<int64_t> shape;                  // coalesced; innermost dimension last
  int num_operands = 0;
  char* data[kMaxOperands] = {};
  std::vector<int64_t> strides[kMaxOperands];  // in elements of each operand
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
};

// All operands must have the same shape (expand them first); operand 0 is the output.
LoopPlan make_loop_plan(std::initializer_list<const Tensor*> operands);

}  // namespace tensorlet
