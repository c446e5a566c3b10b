#pragma once
// The run-time switches tensorlet reads from the environment (README, "At run
// time"), parsed one way: each reads its variable once per process.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/Exception.h"

namespace tensorlet {

// False when the variable is 0, OFF or off; true when it is unset or anything else.
inline bool environment_switch_on(const char* name) {
  const char* v = std::getenv(name);
  return !(v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "OFF") == 0 || std::strcmp(v, "off") == 0));
}

// A size in bytes: digits, optionally followed by K, M or G (KiB, MiB, GiB); `fallback`
// when the variable is unset or empty. Anything else is refused with a ValueError
// naming the variable, raised by the op that first reads it (and by every later one,
// since the value is not kept), rather than guessed at.
inline int64_t environment_bytes(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  constexpr int64_t kLimit = int64_t{1} << 32;  // shifted by 30 still fits an int64_t
  int64_t value = 0;
  const char* p = v;
  while (*p >= '0' && *p <= '9' && value < kLimit) value = value * 10 + (*p++ - '0');
  const bool one_suffix = p[0] != 0 && p[1] == 0;
  const int shift = p[0] == 0                      ? 0
                    : one_suffix && p[0] == 'K' ? 10
                    : one_suffix && p[0] == 'M' ? 20
                    : one_suffix && p[0] == 'G' ? 30
                                                : -1;
  TL_CHECK_VALUE(p != v && shift >= 0 && value < kLimit, name, "=", v,
                 " is not a size: give a number of bytes, optionally followed by K, M or G (KiB, MiB, GiB), "
                 "for example 16M, or unset it for the default");
  return value << shift;
}

}  // namespace tensorlet
