#pragma once
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
// Writes the formatted text into out (at most size bytes, NUL included); returns its length.
size_t fmtlike_format(const char* pattern, long value, char* out, size_t size);
#ifdef __cplusplus
}
#endif
