#include "fmtlike/c_api.h"

#include <cstring>

#include "fmtlike/format.h"

extern "C" size_t fmtlike_format(const char* pattern, long value, char* out, size_t size) {
  std::string text = fmtlike::format(pattern, value);
  if (size > 0) {
    size_t n = text.size() < size - 1 ? text.size() : size - 1;
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
  }
  return text.size();
}
