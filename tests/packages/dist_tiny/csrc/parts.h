#pragma once
#ifdef __cplusplus
extern "C" {
#endif
unsigned dist_checksum(const char *text);
long dist_scale(long value);
long dist_table_sum(int count);
#ifdef __cplusplus
}
#endif
