#include "fmtlike/format.h"

namespace fmtlike {
std::string format(const std::string& pattern, long value) {
  auto at = pattern.find("{}");
  if (at == std::string::npos) return pattern;
  return pattern.substr(0, at) + std::to_string(value) + pattern.substr(at + 2);
}
const char* version() { return "3.4.1"; }
}  // namespace fmtlike
