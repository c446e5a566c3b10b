#pragma once
// Reached through include_dirs=["csrc"]; the macros through define_macros and undef_macros.
#ifndef WITH_PYTHON
#error "define_macros did not define WITH_PYTHON"
#endif
#ifdef SEGMENTS_POISON
#error "undef_macros did not undefine SEGMENTS_POISON (define_macros defines it first)"
#endif
#include <torch/library.h>
