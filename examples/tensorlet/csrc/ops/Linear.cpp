// mm / bmm: what every backend shares (ops/Linear.h), and the matmul composite. The
// GEMMs are the backends': ops/cpu/LinearKernels.cpp, ops/cuda/LinearKernels.cu.
#include "generated/Functions.h"
#include "generated/NativeFunctions.h"
#include "ops/Linear.h"
#include "ops/TensorIterator.h"

namespace tensorlet::native {
namespace {

void check_mm(const Tensor& a, const Tensor& b, const char* name) {
  TL_CHECK(a.dim() == 2, name, ": self must be a matrix");
  TL_CHECK(b.dim() == 2, name, ": mat2 must be a matrix");
  TL_CHECK(a.size(1) == b.size(0), name, ": mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1),
           " and ", b.size(0), "x", b.size(1), ")");
  TL_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ",
           scalar_type_name(a.dtype()), " != ", scalar_type_name(b.dtype()));
  TL_CHECK(a.dtype() != ScalarType::Bool, name, ": \"addmm\" not implemented for 'bool'");
}

}  // namespace

Tensor mm_result(const Tensor& self, const Tensor& mat2) {
  check_mm(self, mat2, "mm");
  return empty_tensor({self.size(0), mat2.size(1)}, self.dtype(), common_device({&self, &mat2}));
}

Tensor bmm_result(const Tensor& self, const Tensor& mat2) {
  TL_CHECK(self.dim() == 3 && mat2.dim() == 3, "batch1 and batch2 must be 3D tensors");
  TL_CHECK(self.size(0) == mat2.size(0), "batch1 and batch2 must have same number of batches, got ", self.size(0),
           " and ", mat2.size(0));
  check_mm(tensorlet::select(self, 0, 0 * self.size(0)), tensorlet::select(mat2, 0, 0), "bmm");
  return empty_tensor({self.size(0), self.size(1), mat2.size(2)}, self.dtype(), common_device({&self, &mat2}));
}

void prepare_mm_out(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  check_mm(self, mat2, "mm");
  prepare_out(out, {self.size(0), mat2.size(1)}, self.dtype(), common_device({&self, &mat2}), "mm");
}

Tensor mm_out_generic(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  prepare_mm_out(self, mat2, out);
  if (!out.device().is_meta()) tensorlet::copy_(out, tensorlet::mm(self, mat2), false);
  return out;
}

Tensor matmul_composite(const Tensor& self, const Tensor& other) {
  const int64_t da = self.dim(), db = other.dim();
  TL_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db, "D");
  if (da == 1 && db == 1) return tensorlet::sum(tensorlet::mul(self, other));
  if (da == 2 && db == 2) return tensorlet::mm(self, other);
  if (da == 1 && db == 2) return tensorlet::squeeze(tensorlet::mm(tensorlet::unsqueeze(self, 0), other), 0);
  if (da == 2 && db == 1) return tensorlet::squeeze(tensorlet::mm(self, tensorlet::unsqueeze(other, 1)), 1);
  // Batched: broadcast the batch dims, fold them into one, bmm, unfold.
  Tensor a = da == 1 ? tensorlet::unsqueeze(self, 0) : self;
  Tensor b = db == 1 ? tensorlet::unsqueeze(other, 1) : other;
  std::vector<int64_t> batch_a(a.sizes().begin(), a.sizes().end() - 2);
  std::vector<int64_t> batch_b(b.sizes().begin(), b.sizes().end() - 2);
  std::vector<int64_t> batch = broadcast_shapes(batch_a, batch_b);
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  auto with = [&](std::initializer_list<int64_t> tail) {
    std::vector<int64_t> s = batch;
    s.insert(s.end(), tail);
    return s;
  };
  Tensor a3 = tensorlet::reshape(tensorlet::expand(a, with({m, k})), {nb, m, k});
  Tensor b3 = tensorlet::reshape(tensorlet::expand(b, with({b.size(-2), n})), {nb, b.size(-2), n});
  Tensor r = tensorlet::reshape(tensorlet::bmm(a3, b3), with({m, n}));
  if (da == 1) r = tensorlet::squeeze(r, -2);
  if (db == 1) r = tensorlet::squeeze(r, -1);
  return r;
}

}  // namespace tensorlet::native
