#pragma once
// The run-time switches tensorlet reads from the environment (README, "At run
// time"), parsed one way each: a switch, a size. Each is read once per process.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/Exception.h"

namespace tensorlet {

// Whether `value` is `word` (given in lower case), ignoring case, as CMake compares its
// boolean constants.
inline bool environment_word_is(const char* value, const char* word) {
  for (; *value && *word; ++value, ++word)
    if (std::tolower(static_cast<unsigned char>(*value)) != *word) return false;
  return *value == *word;
}

// A switch, read as CMake reads a boolean: 1, ON, YES, TRUE, Y and other non-zero integers
// are on, 0, OFF, NO, FALSE and N off, in any case; unset or empty, `fallback`. Anything
// else is refused with a ValueError naming the variable (raised by each use until it is
// mended), rather than taken as on.
inline bool environment_switch(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  for (const char* word : {"on", "yes", "true", "y"})
    if (environment_word_is(v, word)) return true;
  for (const char* word : {"off", "no", "false", "n"})
    if (environment_word_is(v, word)) return false;
  const char* digits = v + (*v == '-' || *v == '+');
  const size_t length = std::strlen(digits);
  TL_CHECK_VALUE(length > 0 && std::strspn(digits, "0123456789") == length, name, "=", v,
                 " is not a switch: give 1, ON, YES or TRUE to turn it on, 0, OFF, NO or FALSE to turn it off, "
                 "or unset it for the default");
  return std::strspn(digits, "0") != length;  // an integer: on unless zero
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
