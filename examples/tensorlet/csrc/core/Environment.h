#pragma once
// The run-time switches tensorlet reads from the environment (README, "At run
// time"), parsed one way: each reads its variable once per process.
#include <cstdlib>
#include <cstring>

namespace tensorlet {

// False when the variable is 0, OFF or off; true when it is unset or anything else.
inline bool environment_switch_on(const char* name) {
  const char* v = std::getenv(name);
  return !(v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "OFF") == 0 || std::strcmp(v, "off") == 0));
}

}  // namespace tensorlet
