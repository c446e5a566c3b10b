#include "common.h"

namespace {
int64_t version_code() { return SEGMENTS_VERSION_CODE; }
}  // namespace

TORCH_LIBRARY_FRAGMENT(torch_segments, m) { m.def("version_code", &version_code); }
