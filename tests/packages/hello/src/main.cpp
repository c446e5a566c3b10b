#include <iostream>

#include "greet.h"

int main() {
  std::cout << greeting("buildkit") << "\n";
  return 0;
}
