// A C++ program using an installed tensorlet through find_package(Tensorlet).
#include <tensorlet/tensorlet.h>

#include <cstdio>

int main() {
  using namespace tensorlet;
  Tensor a = arange(Scalar(4), ScalarType::Float);
  Tensor b = ones({4}, ScalarType::Float);
  Tensor c = add(a, b, Scalar(2));  // a + 2 * b
  std::printf("add:");
  for (int64_t i = 0; i < c.numel(); ++i) std::printf(" %g", c.data<float>()[i]);
  std::printf("\nsum: %g\n", sum(c).item().to_double());
  return 0;
}
