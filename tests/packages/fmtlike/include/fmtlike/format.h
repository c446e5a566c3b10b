#pragma once
#include <string>

namespace fmtlike {
// "{}" in the pattern is replaced by the number, once.
std::string format(const std::string& pattern, long value);
const char* version();
}  // namespace fmtlike
