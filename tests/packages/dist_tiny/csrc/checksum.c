#include "parts.h"

/* A rolling checksum: the C translation unit of the archive. */
unsigned dist_checksum(const char *text) {
    unsigned sum = 7;
    for (; *text; ++text) sum = sum * 31u + (unsigned char)*text;
    return sum;
}
