#include "parts.h"

#include <string>

// The shared library's one entry point, loaded by dist_tiny/__init__.py with ctypes.
extern "C" long dist_tiny_answer() {
    std::string word = "buildkit";
    return static_cast<long>(dist_checksum(word.c_str()) % 1000) + dist_scale(1) + dist_table_sum(6);
}
